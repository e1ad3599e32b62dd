/**
 * The operator commands (`accounts`, `keys`, `usage`) are clients of a running gateway's admin
 * API rather than writers to its database, so that the gateway's caches (keys, balances) learn of
 * every change at once. This is the shared part: the options every such command takes, and the
 * HTTP client that turns an error envelope into an ApiError (exit status 1).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './usage-error.js';

export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** An answer of the admin API that is an error, or no answer at all: exit status 1. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly code: string | null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export class AdminClient {
  private readonly base: string;

  constructor(
    url: string,
    private readonly token: string,
  ) {
    this.base = `${url.replace(/\/+$/, '')}/admin/v1`;
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, body);
  }

  delete<T>(path: string): Promise<T> {
    return this.request<T>('DELETE', path);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, 'user-agent': 'tollgate-cli' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (err as Error).message;
      throw new ApiError(`cannot reach the gateway at ${this.base.slice(0, -'/admin/v1'.length)} (${why}); start it, or point --url or TOLLGATE_URL at it`, null, null);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ApiError(`the gateway answered HTTP ${response.status} with a body that is not JSON`, response.status, null);
    }
    if (!response.ok) {
      const error = (parsed as { error?: { message?: unknown; code?: unknown } } | null)?.error;
      const message = typeof error?.message === 'string' ? error.message : `HTTP ${response.status}`;
      throw new ApiError(message, response.status, typeof error?.code === 'string' ? error.code : null);
    }
    return parsed as T;
  }
}

const COMMON_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

/** Marks an argument that looks like a negative number, so that parseArgs does not read it as an option. */
const NEGATIVE = '\u0000';

export interface ParsedCommand {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
  json: boolean;
  client(): AdminClient;
}

/**
 * Parses a command's arguments with the common `--url`, `--token` and `--json`, and checks the
 * number of positionals. `-5` and `-0.5` are values (an adjustment's credits), not options.
 */
export function parseCommand(
  argv: readonly string[],
  options: ParseArgsConfig['options'],
  positionalNames: readonly string[],
  usage: string,
  env: NodeJS.ProcessEnv = process.env,
): ParsedCommand {
  const args = argv.map((a) => (/^-(\d|\.\d)/.test(a) ? `${NEGATIVE}${a}` : a));
  const { values, positionals } = parseArgs({ args, options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true });
  const restore = (v: unknown) => (typeof v === 'string' && v.startsWith(NEGATIVE) ? v.slice(1) : v);
  const cleanValues = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, restore(v)])) as Record<string, string | boolean | undefined>;
  const cleanPositionals = positionals.map((p) => restore(p) as string);
  if (cleanPositionals.length !== positionalNames.length) {
    const problem = cleanPositionals.length < positionalNames.length ? `missing ${positionalNames.slice(cleanPositionals.length).join(' and ')}` : `unexpected argument "${cleanPositionals[positionalNames.length]}"`;
    throw new UsageError(`${problem} (usage: tollgate ${usage})`);
  }
  return {
    positionals: cleanPositionals,
    values: cleanValues,
    json: cleanValues.json === true,
    client: () => {
      const url = (cleanValues.url as string | undefined) ?? env.TOLLGATE_URL ?? DEFAULT_URL;
      // A URL with an @ in it is never echoed: what comes before the @ may be a password.
      if (url.includes('@')) throw new UsageError('--url must not carry a user name or password; the admin token goes in --token or TOLLGATE_ADMIN_TOKEN');
      if (!/^https?:\/\//.test(url) || !URL.canParse(url)) throw new UsageError(`--url must be an http:// or https:// URL of the gateway (got "${url}")`);
      const token = (cleanValues.token as string | undefined) ?? env.TOLLGATE_ADMIN_TOKEN;
      if (token === undefined || token === '') throw new UsageError('no admin token: set TOLLGATE_ADMIN_TOKEN (or pass --token) to the gateway\'s server.admin_token');
      return new AdminClient(url, token);
    },
  };
}

/** A path segment: ids may hold `/`, which must travel encoded. */
export const seg = (id: string): string => encodeURIComponent(id);

/** A number of credits from the command line: "10", "-2.5", "0.000001". */
export function creditsArg(text: string, name: string): number {
  if (!/^-?(\d+(\.\d*)?|\.\d+)$/.test(text)) throw new UsageError(`${name} must be a number of credits, such as 10 or -2.5 (got "${text}")`);
  // Checked here: Number() rounds 1.0000000000000001 to 1, and the gateway would be sent 1.
  const decimals = /\.(\d*?)0*$/.exec(text)?.[1] ?? '';
  if (decimals.length > 6) throw new UsageError(`${name} may have at most 6 decimal places, a credit being counted in millionths (got "${text}")`);
  return Number(text);
}
