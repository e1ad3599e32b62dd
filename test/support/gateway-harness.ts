/**
 * Starts a real gateway listening on an ephemeral loopback port, from a configuration object, with
 * an in-memory SQLite store. Keys for the accounts are generated here and handed to the test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../../src/auth/api-key.js';
import { validateConfig } from '../../src/config/validate.js';
import type { Config } from '../../src/config/schema.js';
import { createGateway, type Gateway } from '../../src/app/gateway.js';
import { createLogger } from '../../src/logging/logger.js';
import { REDIS_URL } from './redis.js';

export interface HarnessKey {
  account: string;
  key: string;
  status?: 'active' | 'disabled';
  scope?: { models?: string[]; endpoints?: string[]; sdks?: string[] };
}

export interface RunningGateway {
  url: string;
  baseURL: string;
  gateway: Gateway;
  /** Keys by the name given in `keys`. */
  keys: Record<string, string>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Partial configuration; providers/models/tiers default to one mock model on one tier. */
  config?: Record<string, unknown>;
  /** Named keys to create: name → account, status, scope. */
  keys?: Record<string, { account?: string; status?: 'active' | 'disabled'; scope?: HarnessKey['scope'] }>;
  /** Accounts to create (id → tier); default one account "acct" on tier "standard". */
  accounts?: Record<string, string>;
  /** Key strings to use instead of generating them, by name: several gateways sharing keys. */
  presetKeys?: Record<string, string>;
  /** Rate limits in this process's memory (default) or in the machine's Redis under a prefix of its own. */
  limits?: 'memory' | { redisUrl?: string; keyPrefix: string; onUnavailable?: 'local' | 'reject' };
  /** The memory limiter's clock, for tests that travel in time. */
  clock?: () => number;
  /** Opening credits of every account (default 100). */
  credits?: number;
  /** Log lines of the gateway's logger, when a test reads them. */
  logStream?: NodeJS.WritableStream;
}

export const MOCK_MODEL = {
  id: 'mock-chat',
  capabilities: ['chat', 'streaming', 'tools', 'json_mode', 'vision'],
  context_window: 4096,
  max_output_tokens: 1024,
  routes: [{ provider: 'mock', model: 'mock-upstream' }],
};

export async function startGateway(options: HarnessOptions = {}): Promise<RunningGateway> {
  const accounts = options.accounts ?? { acct: 'standard' };
  const keySpecs = options.keys ?? { main: {} };
  const keys: Record<string, string> = {};
  const accountEntries = Object.entries(accounts).map(([id, tier]) => ({ id, tier, credits: options.credits ?? 100, keys: [] as Array<Record<string, unknown>> }));
  for (const [name, spec] of Object.entries(keySpecs)) {
    const key = options.presetKeys?.[name] ?? generateApiKey().key;
    keys[name] = key;
    const owner = accountEntries.find((a) => a.id === (spec.account ?? accountEntries[0]?.id));
    if (!owner) throw new Error(`harness: key ${name} names an unknown account`);
    owner.keys.push({ key, name, status: spec.status ?? 'active', ...(spec.scope ? { scope: spec.scope } : {}) });
  }
  // Assets of every test gateway in a directory of its own, never in the working tree, removed on close.
  const blobDirectory = mkdtempSync(join(tmpdir(), 'tollgate-test-blobs-'));
  const raw = {
    storage: { url: 'sqlite://:memory:' } as Record<string, unknown>,
    blobs: { directory: blobDirectory },
    log: { level: 'silent' },
    providers: [{ id: 'mock', kind: 'mock' }],
    models: [MOCK_MODEL],
    tiers: { standard: { models: ['*'], endpoints: ['*'] } },
    ...limitsConfig(options.limits),
    ...options.config,
    accounts: accountEntries,
  };
  // Settlements a closing test gateway could not commit stay in its own directory too.
  raw.storage = { spill_directory: join(blobDirectory, 'spill'), ...raw.storage };
  const removeBlobs = (): void => rmSync(blobDirectory, { recursive: true, force: true });
  let gateway: Gateway;
  let address: { url: string };
  try {
    const config: Config = validateConfig(structuredClone(raw), 'test configuration');
    const logger = options.logStream ? createLogger('info', options.logStream) : createLogger('silent');
    gateway = await createGateway(config, logger, options.clock ? { clock: options.clock } : {});
    address = await gateway.listen(0, '127.0.0.1');
  } catch (err) {
    removeBlobs();
    throw err;
  }
  return {
    url: address.url,
    baseURL: `${address.url}/v1`,
    gateway,
    keys,
    close: async () => {
      await gateway.close();
      removeBlobs();
    },
  };
}

function limitsConfig(limits: HarnessOptions['limits']): Record<string, unknown> {
  if (limits === undefined || limits === 'memory') return {};
  return {
    limits: { backend: 'redis', on_redis_unavailable: limits.onUnavailable ?? 'local' },
    redis: { url: limits.redisUrl ?? REDIS_URL, key_prefix: limits.keyPrefix },
  };
}

/** Reads an error response and returns status, headers and the parsed envelope. */
export async function errorOf(response: Response): Promise<{ status: number; requestId: string | null; body: { error: { message: string; type: string; param: string | null; code: string } } }> {
  const text = await response.text();
  return { status: response.status, requestId: response.headers.get('x-request-id'), body: JSON.parse(text) };
}

/** Asserts the exact envelope shape: one top-level key `error` with exactly four fields. */
export function isEnvelope(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const keys = Object.keys(body);
  if (keys.length !== 1 || keys[0] !== 'error') return false;
  const error = (body as { error: Record<string, unknown> }).error;
  return (
    Object.keys(error).sort().join(',') === 'code,message,param,type' &&
    typeof error.message === 'string' && typeof error.type === 'string' && typeof error.code === 'string' &&
    (error.param === null || typeof error.param === 'string')
  );
}
