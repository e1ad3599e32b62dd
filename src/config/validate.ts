/**
 * Validation of a parsed configuration: the schema (with defaults filled in) and then the rules a
 * schema cannot say, such as a route naming a provider that exists. The first problem found is
 * reported, naming its field.
 */
import { Ajv, type ErrorObject } from 'ajv';
import { ConfigSchema, MAX_TIMER_MS, TIMER_CAP, type Config } from './schema.js';
import { ConfigError } from './config-error.js';
import { parseSize } from './size.js';
import { parseApiKey } from '../auth/api-key.js';
import { ENDPOINT_NAMES, matchesNone } from '../auth/endpoint-names.js';
import { SDK_NAMES } from '../auth/sdk.js';

const ajv = new Ajv({ useDefaults: true, allErrors: false, strict: false });
const validateSchema = ajv.compile<Config>(ConfigSchema);

type SchemaNode = Record<string, unknown>;

/** A JSON pointer's segments, unescaped (Ajv also URI-encodes those of a schema path: a pattern). */
function segmentsOf(pointer: string, uriEncoded: boolean): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => (uriEncoded ? decodeURIComponent(s) : s).replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * The schema holding the failed keyword (`#/properties/server/properties/host/minLength` → the
 * host's schema), for its annotations: Ajv attaches it to the error only with `verbose`.
 */
function schemaOf(error: ErrorObject): SchemaNode {
  let node: unknown = ConfigSchema;
  for (const segment of segmentsOf(error.schemaPath.replace(/^#/, ''), true).slice(0, -1)) {
    node = node !== null && typeof node === 'object' ? (node as SchemaNode)[segment] : undefined;
  }
  return node !== null && typeof node === 'object' ? (node as SchemaNode) : {};
}

/** What a value must be, from the schema's `expected` (or `description`) annotation. */
function expectedOf(schema: SchemaNode): string | undefined {
  if (typeof schema.expected === 'string') return schema.expected;
  return typeof schema.description === 'string' ? schema.description : undefined;
}

function fieldOf(error: ErrorObject, child?: string): string {
  const segments = segmentsOf(error.instancePath, false);
  if (child !== undefined) segments.push(child);
  return segments.map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : i === 0 ? s : `.${s}`)).join('') || '(top level)';
}

/** The field an error is about and what is wrong with it. */
function problem(error: ErrorObject): { field: string; detail: string } {
  const params = error.params as { additionalProperty?: string; missingProperty?: string };
  const schema = schemaOf(error);
  switch (error.keyword) {
    case 'required':
      return { field: fieldOf(error, params.missingProperty), detail: 'is required' };
    case 'additionalProperties':
      // A map's key that is not a valid name (a tier "free tier") is named as a key of the map.
      if (typeof schema.keys === 'string') {
        return { field: fieldOf(error), detail: `has an invalid key ${JSON.stringify(params.additionalProperty)} (keys must be ${schema.keys})` };
      }
      return { field: fieldOf(error, params.additionalProperty), detail: 'is not a known field' };
    default:
      return { field: fieldOf(error), detail: describe(error, schema) };
  }
}

function describe(error: ErrorObject, schema: SchemaNode): string {
  const params = error.params as { allowedValues?: unknown[]; pattern?: string; limit?: number };
  switch (error.keyword) {
    case 'enum':
      return `must be one of ${(params.allowedValues ?? []).join(', ')}`;
    case 'pattern':
      // Never the value itself: it may be a token or a URL with a password.
      return `must be ${expectedOf(schema) ?? `text matching /${String(params.pattern)}/`}`;
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : (error.message ?? 'is invalid');
    case 'maximum':
      return params.limit === MAX_TIMER_MS ? `must be ${TIMER_CAP}` : (error.message ?? 'is invalid');
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
      const union = schemaOf(anyOf);
      const text = literalUnionMessage(related) ?? (typeof union.expected === 'string' ? `must be ${union.expected}` : related.map((e) => describe(e, schemaOf(e))).join(', or '));
      throw new ConfigError(source, fieldOf(anyOf), `${text} (got ${JSON.stringify(value)})`);
    }
    const { field, detail } = problem(first);
    throw new ConfigError(source, field, detail);
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
  if (config.server.body_limit !== undefined) checkSize(config.server.body_limit, 'server.body_limit', fail);
  const storage = config.storage.url;
  if (storage.startsWith('sqlite://') ? storage.length === 'sqlite://'.length : !URL.canParse(storage)) {
    fail('storage.url', `is not a valid storage URL ("${storage}"); write sqlite://PATH or postgres://user@host:5432/db`);
  }
  if (config.redis !== undefined && !URL.canParse(config.redis.url)) fail('redis.url', `is not a valid URL ("${config.redis.url}")`);
  if (config.limits.backend === 'redis' && config.redis === undefined) fail('redis', 'is required when limits.backend is redis (e.g. redis: { url: redis://127.0.0.1:6379 })');
  checkSize(config.uploads.max_bytes, 'uploads.max_bytes', fail);
  checkSize(config.videos.max_bytes, 'videos.max_bytes', fail);
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
  // An empty list of models matches none: every request would be refused, as with endpoints.
  const noModels = (field: string, globs: readonly string[] | undefined): void => {
    if (globs !== undefined && globs.length === 0) fail(field, 'is empty, so it would refuse every request (leave it out to allow every model)');
  };
  for (const [name, tier] of Object.entries(config.tiers)) {
    noModels(`tiers.${name}.models`, tier.models);
    matchingNone(`tiers.${name}.endpoints`, tier.endpoints, ENDPOINT_NAMES, 'endpoint');
  }
  const accountIds = new Set<string>();
  const keyIds = new Set<string>();
  config.accounts.forEach((a, i) => {
    // The id is stored, listed and logged in full: one that is a whole key would show its secret
    // everywhere, so it is refused without being repeated.
    if (parseApiKey(a.id) !== null) fail(`accounts[${i}].id`, 'has the shape of an API key (sk-tg-<id>-<secret>); an account id is shown everywhere, so it may not be a key');
    if (accountIds.has(a.id)) fail(`accounts[${i}].id`, `duplicate account id "${a.id}"`);
    accountIds.add(a.id);
    if (!Object.hasOwn(config.tiers, a.tier)) fail(`accounts[${i}].tier`, `names unknown tier "${a.tier}" (known: ${Object.keys(config.tiers).join(', ')})`);
    if (!hasMicroPrecision(a.credits)) fail(`accounts[${i}].credits`, `may have at most 6 decimal places (a credit is counted in millionths), got ${a.credits}`);
    a.keys.forEach((k, j) => {
      noModels(`accounts[${i}].keys[${j}].scope.models`, k.scope?.models);
      matchingNone(`accounts[${i}].keys[${j}].scope.endpoints`, k.scope?.endpoints, ENDPOINT_NAMES, 'endpoint');
      matchingNone(`accounts[${i}].keys[${j}].scope.sdks`, k.scope?.sdks, SDK_NAMES, 'SDK');
      const parsed = parseApiKey(k.key);
      if (parsed === null) fail(`accounts[${i}].keys[${j}].key`, 'is not a Tollgate key (sk-tg-...); generate one with `npx tollgate keys generate`');
      else if (keyIds.has(parsed.id)) fail(`accounts[${i}].keys[${j}].key`, 'is listed twice');
      else keyIds.add(parsed.id);
    });
  });
}

/** A size as a number of bytes, of which there must be one at least: "0.5" or "0kb" would refuse every body. */
function checkSize(value: number | string, field: string, fail: (field: string, detail: string) => never): void {
  let bytes: number;
  try {
    bytes = parseSize(value);
  } catch (err) {
    return fail(field, (err as Error).message);
  }
  if (bytes < 1) fail(field, `is ${JSON.stringify(value)}, less than 1 byte; give at least 1 byte (e.g. "4mb")`);
}

/**
 * Whether a number of credits has at most six decimal places, as the store keeps millionths
 * (0.0000001 would otherwise be rounded away in silence, where the admin API refuses it). The
 * file's text is gone once YAML has read it, but the shortest text that reads back as the same
 * number (String()) has no more decimals than any text that does: if it has more than six, no
 * text with six or fewer could have been written.
 */
function hasMicroPrecision(credits: number): boolean {
  const [, fraction = '', exponent = '0'] = /^-?\d+(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(credits)) ?? [];
  return fraction.length - Number(exponent) <= 6;
}
