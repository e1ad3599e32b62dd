/**
 * Validation of a parsed configuration: the schema (with defaults filled in) and then the rules a
 * schema cannot say, such as a route naming a provider that exists. The first problem found is
 * reported, naming its field.
 */
import { Ajv, type ErrorObject } from 'ajv';
import { ConfigSchema, type Config } from './schema.js';
import { ConfigError } from './config-error.js';
import { parseSize } from './size.js';
import { parseApiKey } from '../auth/api-key.js';
import { ENDPOINT_NAMES, matchesNone } from '../auth/endpoint-names.js';
import { SDK_NAMES } from '../auth/sdk.js';

const ajv = new Ajv({ useDefaults: true, allErrors: false, strict: false });
const validateSchema = ajv.compile<Config>(ConfigSchema);

function fieldOf(error: ErrorObject): string {
  const segments = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  const extra = params.missingProperty ?? params.additionalProperty;
  if (extra !== undefined) segments.push(extra);
  return segments.map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : i === 0 ? s : `.${s}`)).join('') || '(top level)';
}

function describe(error: ErrorObject): string {
  const params = error.params as { allowedValues?: unknown[]; additionalProperty?: string };
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'enum':
      return `must be one of ${(params.allowedValues ?? []).join(', ')}`;
    case 'pattern':
      return `has an invalid format (${error.parentSchema?.description ?? `must match ${String(error.schema)}`})`;
    default:
      return error.message ?? 'is invalid';
  }
}

/** For a union of literals Ajv reports one failure per branch; say what the allowed values are. */
function literalUnionMessage(errors: ErrorObject[]): string | undefined {
  const constants = errors.filter((e) => e.keyword === 'const').map((e) => (e.params as { allowedValue: unknown }).allowedValue);
  return constants.length > 0 ? `must be one of ${constants.join(', ')}` : undefined;
}

export function validateConfig(raw: unknown, source: string): Config {
  const candidate = raw ?? {};
  if (!validateSchema(candidate)) {
    const errors = validateSchema.errors ?? [];
    const first = errors[0];
    if (!first) throw new ConfigError(source, null, 'is invalid');
    const anyOf = errors.find((e) => e.keyword === 'anyOf');
    if (anyOf) {
      const related = errors.filter((e) => e.instancePath === anyOf.instancePath && e !== anyOf);
      const value = valueAt(candidate, anyOf.instancePath);
      const text = literalUnionMessage(related) ?? related.map(describe).join(', or ');
      throw new ConfigError(source, fieldOf(anyOf), `${text} (got ${JSON.stringify(value)})`);
    }
    throw new ConfigError(source, fieldOf(first), describe(first));
  }
  checkReferences(candidate, source);
  return candidate;
}

function valueAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const part of pointer.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function checkReferences(config: Config, source: string): void {
  const fail = (field: string, detail: string): never => {
    throw new ConfigError(source, field, detail);
  };
  if (config.server.body_limit !== undefined) {
    try {
      parseSize(config.server.body_limit);
    } catch (err) {
      fail('server.body_limit', (err as Error).message);
    }
  }
  const storage = config.storage.url;
  if (storage.startsWith('sqlite://') ? storage.length === 'sqlite://'.length : !URL.canParse(storage)) {
    fail('storage.url', `is not a valid storage URL ("${storage}"); write sqlite://PATH or postgres://user@host:5432/db`);
  }
  if (config.redis !== undefined && !URL.canParse(config.redis.url)) fail('redis.url', `is not a valid URL ("${config.redis.url}")`);
  if (config.limits.backend === 'redis' && config.redis === undefined) fail('redis', 'is required when limits.backend is redis (e.g. redis: { url: redis://127.0.0.1:6379 })');
  for (const field of ['uploads.max_bytes', 'videos.max_bytes'] as const) {
    const [section, key] = field.split('.') as ['uploads' | 'videos', 'max_bytes'];
    try {
      parseSize(config[section][key]);
    } catch (err) {
      fail(field, (err as Error).message);
    }
  }
  if (config.uploads.retention_ms !== undefined && config.uploads.retention_ms > config.blobs.retention_ms) {
    // The blob sweep removes every blob older than blobs.retention_ms, a file's included.
    fail('uploads.retention_ms', `must not exceed blobs.retention_ms (${config.blobs.retention_ms})`);
  }
  if (config.blobs.backend === 'postgres' && config.blobs.url === undefined && config.storage.url.startsWith('sqlite://')) {
    fail('blobs.url', 'is required when blobs.backend is postgres and storage is SQLite (e.g. postgres://user@host:5432/db)');
  }
  if (config.idempotency.backend === 'redis' && config.redis === undefined) fail('redis', 'is required when idempotency.backend is redis (e.g. redis: { url: redis://127.0.0.1:6379 })');
  const providerIds = new Set<string>();
  config.providers.forEach((p, i) => {
    if (providerIds.has(p.id)) fail(`providers[${i}].id`, `duplicate provider id "${p.id}"`);
    providerIds.add(p.id);
    if (p.kind === 'openai' && p.base_url === undefined) fail(`providers[${i}].base_url`, 'is required for kind openai (e.g. https://api.openai.com/v1)');
    if (p.base_url !== undefined && !URL.canParse(p.base_url)) fail(`providers[${i}].base_url`, `is not a valid URL ("${p.base_url}")`);
    if (p.kind !== 'mock' && p.mock !== undefined) fail(`providers[${i}].mock`, 'is only for providers of kind mock');
  });
  const modelIds = new Set<string>();
  config.models.forEach((m, i) => {
    if (modelIds.has(m.id)) fail(`models[${i}].id`, `duplicate model id "${m.id}"`);
    modelIds.add(m.id);
    if (m.max_output_tokens > m.context_window) fail(`models[${i}].max_output_tokens`, `(${m.max_output_tokens}) is larger than context_window (${m.context_window})`);
    m.routes.forEach((r, j) => {
      if (!providerIds.has(r.provider)) fail(`models[${i}].routes[${j}].provider`, `names unknown provider "${r.provider}" (known: ${[...providerIds].join(', ')})`);
    });
  });
  const matchingNone = (field: string, globs: readonly string[] | undefined, names: readonly string[], what: string): void => {
    if (globs !== undefined && matchesNone(globs, names)) fail(field, `${JSON.stringify(globs)} matches no ${what}, so it would refuse every request (${what}s: ${names.join(', ')})`);
  };
  for (const [name, tier] of Object.entries(config.tiers)) matchingNone(`tiers.${name}.endpoints`, tier.endpoints, ENDPOINT_NAMES, 'endpoint');
  const accountIds = new Set<string>();
  const keyIds = new Set<string>();
  config.accounts.forEach((a, i) => {
    if (accountIds.has(a.id)) fail(`accounts[${i}].id`, `duplicate account id "${a.id}"`);
    accountIds.add(a.id);
    if (!Object.hasOwn(config.tiers, a.tier)) fail(`accounts[${i}].tier`, `names unknown tier "${a.tier}" (known: ${Object.keys(config.tiers).join(', ')})`);
    a.keys.forEach((k, j) => {
      matchingNone(`accounts[${i}].keys[${j}].scope.endpoints`, k.scope?.endpoints, ENDPOINT_NAMES, 'endpoint');
      matchingNone(`accounts[${i}].keys[${j}].scope.sdks`, k.scope?.sdks, SDK_NAMES, 'SDK');
      const parsed = parseApiKey(k.key);
      if (parsed === null) fail(`accounts[${i}].keys[${j}].key`, 'is not a Tollgate key (sk-tg-...); generate one with `npx tollgate keys generate`');
      else if (keyIds.has(parsed.id)) fail(`accounts[${i}].keys[${j}].key`, 'is listed twice');
      else keyIds.add(parsed.id);
    });
  });
}
