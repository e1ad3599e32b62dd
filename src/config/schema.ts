/**
 * The configuration file's schema: one place that says what an operator may write, with defaults.
 * Every field is documented in the README's configuration reference.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { CAPABILITIES } from '../protocol/capabilities.js';
import { MODALITIES } from '../protocol/modalities.js';

/**
 * Node's timers keep a delay in a signed 32-bit count of milliseconds: a longer one is taken as
 * 1 ms, with only a warning, so a shutdown timeout of a month would cut every request at once and
 * a poller would spin. Every duration field is capped at this (about 24.8 days), whether or not a
 * timer waits on it today; retentions and lifetimes aside, which are ages compared with the clock
 * (and blobs.retention_ms's default, 30 days, is above it).
 */
export const MAX_TIMER_MS = 2_147_483_647;
export const TIMER_CAP = `at most ${MAX_TIMER_MS} ms (about 24.8 days), the longest delay a Node.js timer keeps: a longer one fires after 1 ms`;

/** A duration that feeds a timer: `minimum` and the field's own description, and the cap. */
const Duration = (options: { minimum: number; default?: number; description?: string }) =>
  Type.Integer({ ...options, maximum: MAX_TIMER_MS, description: options.description === undefined ? TIMER_CAP : `${options.description}; ${TIMER_CAP}` });
const Millis = (def: number) => Duration({ minimum: 1, default: def });

/**
 * Units in either case ("4mb", "4MB", "1.5 Gb"), as parseSize reads them. Ajv compiles patterns
 * without the `i` flag, so the cases are spelled out. A size of 0 bytes is refused in validate.ts.
 */
const SIZE_EXPECTED = 'a byte count, or a size such as "512kb" or "4mb" (b, kb, mb, gb in either case; powers of 1024)';
const Size = (options: { default?: string; description?: string } = {}) =>
  Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^\\s*\\d+(\\.\\d+)?\\s*([kKmMgG]?[bB]|[kKmMgG])?\\s*$', expected: SIZE_EXPECTED })], {
    ...options,
    expected: SIZE_EXPECTED,
  });
const Id = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$',
  description: 'an identifier: 1 to 128 letters, digits and . _ : / -, starting with a letter or digit',
});
/**
 * A map keyed by identifiers. TypeBox's Record checks only the keys matching its pattern (they
 * become `patternProperties`): without `additionalProperties: false` a key outside it, such as
 * "free tier", would skip every check of its value. `keys` says what a key must be, for the error.
 */
const IdRecord = <T extends TSchema>(value: T, options: { minProperties?: number } = {}) =>
  Type.Record(Id, value, { ...options, additionalProperties: false, keys: Id.description });
const Glob = Type.String({ minLength: 1 });

export const MockOptionsSchema = Type.Object(
  {
    latency_ms: Duration({ minimum: 0, default: 0 }),
    chunk_delay_ms: Duration({ minimum: 0, default: 0 }),
    fail_status: Type.Optional(Type.Integer({ minimum: 400, maximum: 599 })),
    fail_message: Type.Optional(Type.String()),
    retry_after_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
    malformed: Type.Boolean({ default: false }),
    hang: Type.Boolean({ default: false }),
    crash: Type.Boolean({ default: false, description: 'simulates a bug in an adapter: throws a plain Error (the gateway answers 500)' }),
    break_after_chunks: Type.Optional(Type.Integer({ minimum: 0 })),
    error_after_chunks: Type.Optional(Type.Integer({ minimum: 0 })),
    faulty_requests: Type.Optional(
      Type.Integer({ minimum: 1, description: 'the faults above apply to this many requests only, then the mock answers normally (a provider that recovers)' }),
    ),
    missing_capabilities: Type.Array(Type.Union(CAPABILITIES.map((c) => Type.Literal(c))), { default: [] }),
    reply: Type.Optional(Type.String()),
    video_ms: Duration({ minimum: 0, default: 3_000, description: 'how long a mock video job takes from queued to completed' }),
    video_fail: Type.Boolean({ default: false, description: 'mock video jobs end as failed instead of completed' }),
  },
  { additionalProperties: false },
);

export const ProviderSchema = Type.Object(
  {
    id: Id,
    kind: Type.Union([Type.Literal('openai'), Type.Literal('anthropic'), Type.Literal('gemini'), Type.Literal('mock')]),
    base_url: Type.Optional(Type.String({ pattern: '^https?://', expected: 'an http:// or https:// URL' })),
    api_key: Type.Optional(Type.String()),
    // A key the Record's pattern (`^(.*)$`) does not match, one with a line break, would go unchecked.
    headers: Type.Record(Type.String(), Type.String(), { default: {}, additionalProperties: false, keys: 'header names on one line' }),
    max_connections: Type.Integer({ minimum: 1, default: 128 }),
    anthropic_version: Type.String({ default: '2023-06-01' }),
    output_cap_field: Type.Union([Type.Literal('max_completion_tokens'), Type.Literal('max_tokens')], { default: 'max_completion_tokens' }),
    mock: Type.Optional(MockOptionsSchema),
  },
  { additionalProperties: false },
);

export const PriceSchema = Type.Object(
  {
    input_per_million_tokens: Type.Number({ minimum: 0, default: 0 }),
    output_per_million_tokens: Type.Number({ minimum: 0, default: 0 }),
    per_image: Type.Optional(Type.Number({ minimum: 0 })),
    per_audio_second: Type.Optional(Type.Number({ minimum: 0 })),
    per_video_second: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false, default: {} },
);

export const RouteSchema = Type.Object(
  {
    provider: Id,
    // The usage record and the video job keep it in a column of 256 characters: a longer one would fail every charge of the route.
    model: Type.String({ minLength: 1, maxLength: 256 }),
    priority: Type.Integer({ minimum: 0, default: 1, description: 'routes with the lowest number are tried first; higher numbers are fallbacks' }),
    weight: Type.Number({ exclusiveMinimum: 0, default: 1, description: 'share of traffic among routes of the same priority (weighted strategy)' }),
  },
  { additionalProperties: false },
);

export const STRATEGIES = ['weighted', 'priority', 'least_latency', 'fewest_in_flight'] as const;
const Strategy = Type.Union(STRATEGIES.map((s) => Type.Literal(s)));

/** A model may set its own strategy and attempts; what it leaves out comes from `routing`. */
export const ModelRoutingSchema = Type.Object(
  { strategy: Type.Optional(Strategy), max_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })) },
  { additionalProperties: false },
);

export const RoutingSchema = Type.Object(
  {
    strategy: Type.Union(STRATEGIES.map((s) => Type.Literal(s)), { default: 'weighted' }),
    max_attempts: Type.Integer({ minimum: 1, maximum: 10, default: 3 }),
    avoid_failed_route_ms: Duration({ minimum: 0, default: 60_000, description: 'how long a route that just failed a caller is tried last for that caller and model' }),
    circuit_breaker: Type.Object(
      {
        consecutive_failures: Type.Integer({ minimum: 1, default: 5 }),
        failure_rate: Type.Number({ exclusiveMinimum: 0, maximum: 1, default: 0.5 }),
        min_requests: Type.Integer({ minimum: 1, default: 20 }),
        window_ms: Millis(30_000),
        cooldown_ms: Millis(30_000),
        max_retry_after_ms: Millis(300_000),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false, default: {} },
);

export const ModelSchema = Type.Object(
  {
    id: Id,
    owned_by: Type.String({ default: 'tollgate' }),
    created: Type.Optional(Type.Integer({ minimum: 0 })),
    capabilities: Type.Array(Type.Union(CAPABILITIES.map((c) => Type.Literal(c))), { minItems: 1, uniqueItems: true }),
    context_window: Type.Integer({ minimum: 1 }),
    max_output_tokens: Type.Integer({ minimum: 1, default: 4096 }),
    tokens_per_image: Type.Integer({ minimum: 0, default: 2_500, description: 'the most prompt tokens one image sent by URL can count, for token reservations' }),
    price: PriceSchema,
    routes: Type.Array(RouteSchema, { minItems: 1 }),
    routing: Type.Optional(ModelRoutingSchema),
    budget_ms: Type.Optional(Duration({ minimum: 1, description: "this model's generation time budget, instead of generation.budget_ms" })),
  },
  { additionalProperties: false },
);

const DailyCapsSchema = Type.Object(
  Object.fromEntries(MODALITIES.map((m) => [m, Type.Optional(Type.Integer({ minimum: 1, description: `requests per UTC day for ${m}` }))])),
  { additionalProperties: false, default: {} },
);

/** Every quantity is optional: one left out is not limited (or, in a model override, shared with the tier's). */
export const LimitsSchema = Type.Object(
  {
    requests_per_minute: Type.Optional(Type.Integer({ minimum: 1 })),
    tokens_per_minute: Type.Optional(Type.Integer({ minimum: 1 })),
    daily: DailyCapsSchema,
    max_in_flight: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false, default: {} },
);

/** Limits of their own for a group of models, counted apart from the tier's (see README, Rate limits). */
export const ModelLimitsSchema = Type.Object(
  { models: Type.Array(Glob, { minItems: 1 }), limits: LimitsSchema },
  { additionalProperties: false },
);

export const TierSchema = Type.Object(
  {
    models: Type.Array(Glob, { default: ['*'] }),
    endpoints: Type.Array(Glob, { default: ['*'] }),
    limits: LimitsSchema,
    model_limits: Type.Array(ModelLimitsSchema, { default: [] }),
  },
  { additionalProperties: false },
);

export const ScopeSchema = Type.Object(
  {
    models: Type.Optional(Type.Array(Glob)),
    endpoints: Type.Optional(Type.Array(Glob)),
    sdks: Type.Optional(Type.Array(Glob)),
  },
  { additionalProperties: false },
);

export const KeySchema = Type.Object(
  {
    key: Type.String({ minLength: 1, description: 'the full API key, usually ${ENV_VAR}; generate one with `tollgate keys generate`' }),
    name: Type.Optional(Type.String()),
    status: Type.Union([Type.Literal('active'), Type.Literal('disabled')], { default: 'active' }),
    scope: Type.Optional(ScopeSchema),
  },
  { additionalProperties: false },
);

export const AccountSchema = Type.Object(
  {
    id: Id,
    name: Type.Optional(Type.String()),
    tier: Type.String({ minLength: 1 }),
    // The most a balance holds exactly (storage/types.ts, MAX_BALANCE_MICROS).
    credits: Type.Number({ minimum: 0, maximum: 9_000_000_000, default: 0 }),
    keys: Type.Array(KeySchema, { default: [] }),
  },
  { additionalProperties: false },
);

export const ConfigSchema = Type.Object(
  {
    server: Type.Object(
      {
        // An empty host would listen on every interface, the opposite of what leaving it out does.
        host: Type.String({ minLength: 1, default: '127.0.0.1' }),
        port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
        body_limit: Type.Optional(Size()),
        // The presented token is what an Authorization header carries, which never starts or ends
        // with whitespace (HTTP drops it): a configured token that does could never be presented.
        admin_token: Type.Optional(
          Type.String({ minLength: 16, pattern: '^\\S(.*\\S)?$', expected: 'a token on one line without spaces at either end (an Authorization header cannot carry them)' }),
        ),
        max_in_flight: Type.Integer({ minimum: 1, default: 10_000, description: 'requests handled by this process at once; more are answered 503 gateway_overloaded' }),
        max_event_loop_delay_ms: Millis(1_000),
        shutdown_timeout_ms: Millis(30_000),
        body_idle_timeout_ms: Duration({ minimum: 1, default: 30_000, description: 'a request body being received that sends no byte for this long is ended with 408 (an upload keeps nothing of it)' }),
        public_url: Type.Optional(Type.String({ pattern: '^https?://', expected: 'an http:// or https:// URL', description: 'the base URL callers reach the gateway at, for asset links; default: the scheme and Host of each request' })),
      },
      { additionalProperties: false, default: {} },
    ),
    storage: Type.Object(
      {
        url: Type.String({ pattern: '^(sqlite|postgres|postgresql)://', default: 'sqlite://./data/tollgate.db', expected: 'a sqlite://PATH or postgres:// URL' }),
        spill_directory: Type.String({
          minLength: 1,
          default: './data/spill',
          description: 'where charges the store could not take before shutdown are written, to be committed at the next start',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    upstream: Type.Object(
      {
        connect_timeout_ms: Millis(5_000),
        timeout_ms: Millis(120_000),
        idle_timeout_ms: Millis(60_000),
      },
      { additionalProperties: false, default: {} },
    ),
    limits: Type.Object(
      {
        backend: Type.Union([Type.Literal('memory'), Type.Literal('redis')], { default: 'memory' }),
        on_redis_unavailable: Type.Union([Type.Literal('local'), Type.Literal('reject')], { default: 'local' }),
      },
      { additionalProperties: false, default: {} },
    ),
    redis: Type.Optional(
      Type.Object(
        {
          url: Type.String({ pattern: '^rediss?://', expected: 'a redis:// or rediss:// URL' }),
          key_prefix: Type.String({ default: 'tollgate:' }),
          command_timeout_ms: Millis(250),
        },
        { additionalProperties: false },
      ),
    ),
    blobs: Type.Object(
      {
        backend: Type.Union([Type.Literal('local'), Type.Literal('postgres')], { default: 'local', description: 'where generated assets and uploads are kept' }),
        directory: Type.String({ minLength: 1, default: './data/blobs', description: 'local backend: the directory' }),
        url: Type.Optional(Type.String({ pattern: '^(postgres|postgresql)://', expected: 'a postgres:// URL', description: 'postgres backend: the database (default: storage.url)' })),
        retention_ms: Type.Integer({ minimum: 60_000, default: 2_592_000_000, description: 'how long assets are kept (30 days)' }),
      },
      { additionalProperties: false, default: {} },
    ),
    uploads: Type.Object(
      {
        max_bytes: Size({ default: '512mb', description: 'the largest file one upload (or a transcription\'s audio, or a video reference) may have' }),
        retention_ms: Type.Optional(Type.Integer({ minimum: 60_000, description: 'how long uploaded files are kept (default and at most: blobs.retention_ms)' })),
        content_types: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, default: ['*/*'], description: 'content types an upload may have, as globs such as audio/*' }),
      },
      { additionalProperties: false, default: {} },
    ),
    videos: Type.Object(
      {
        poll_interval_ms: Millis(5_000),
        lease_ms: Duration({ minimum: 1_000, default: 60_000, description: 'how long one instance holds a job it polls before another may take it over' }),
        max_bytes: Size({ default: '2gb', description: 'the largest finished video kept' }),
        give_up_after_ms: Duration({ minimum: 1_000, default: 600_000, description: 'a job whose upstream cannot be reached, or whose charge is not recorded, for this long is marked failed' }),
      },
      { additionalProperties: false, default: {} },
    ),
    idempotency: Type.Object(
      {
        backend: Type.Union([Type.Literal('memory'), Type.Literal('redis')], {
          default: 'memory',
          description: 'where claims of running requests live: memory (one instance) or redis (several); finished records are always in the store',
        }),
        lifetime_ms: Type.Integer({ minimum: 1_000, default: 86_400_000, description: 'how long a finished request is replayed to resends of its key' }),
      },
      { additionalProperties: false, default: {} },
    ),
    responses: Type.Object(
      {
        retention_ms: Type.Integer({
          minimum: 60_000,
          default: 86_400_000,
          description: 'how long a Responses API response is kept for later requests that refer to its output items (item_reference)',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    usage: Type.Object(
      {
        retention_ms: Type.Optional(
          Type.Integer({ minimum: 3_600_000, description: 'how long per-request usage records are kept (the ledger is kept whole); without it, for ever' }),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    generation: Type.Object({ budget_ms: Millis(600_000) }, { additionalProperties: false, default: {} }),
    routing: RoutingSchema,
    metrics: Type.Object({ enabled: Type.Boolean({ default: true }) }, { additionalProperties: false, default: {} }),
    log: Type.Object(
      {
        level: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), { default: 'info' }),
        requests: Type.Boolean({ default: true }),
      },
      { additionalProperties: false, default: {} },
    ),
    providers: Type.Array(ProviderSchema, { minItems: 1 }),
    models: Type.Array(ModelSchema, { minItems: 1 }),
    tiers: IdRecord(TierSchema, { minProperties: 1 }),
    accounts: Type.Array(AccountSchema, { default: [] }),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
export type ProviderConfig = Static<typeof ProviderSchema>;
export type MockOptions = Static<typeof MockOptionsSchema>;
export type ModelConfig = Static<typeof ModelSchema>;
export type TierConfig = Static<typeof TierSchema>;
export type LimitsConfig = Static<typeof LimitsSchema>;
export type RedisConfig = Static<typeof ConfigSchema>['redis'];
export type AccountConfig = Static<typeof AccountSchema>;
export type KeyConfig = Static<typeof KeySchema>;
export type ScopeConfig = Static<typeof ScopeSchema>;
export type PriceConfig = Static<typeof PriceSchema>;
export type RouteConfig = Static<typeof RouteSchema>;
export type RoutingConfig = Static<typeof RoutingSchema>;
export type Strategy = (typeof STRATEGIES)[number];
