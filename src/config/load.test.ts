import { describe, expect, it } from 'vitest';
import { parseConfigText } from './load.js';
import { ConfigError } from './config-error.js';
import { generateApiKey } from '../auth/api-key.js';
import { parseSize } from './size.js';

const minimal = `
providers:
  - id: local
    kind: openai
    base_url: http://127.0.0.1:8000/v1
    api_key: \${UPSTREAM_KEY}
models:
  - id: llama
    capabilities: [chat, streaming]
    context_window: 8192
    routes: [{ provider: local, model: meta-llama/Llama-3.1-8B }]
tiers:
  free: { models: ["llama*"] }
`;

const scopedKey = generateApiKey().key;

function configError(text: string, env: NodeJS.ProcessEnv = { UPSTREAM_KEY: 'x' }): ConfigError {
  try {
    parseConfigText(text, 'tollgate.yaml', env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration loading', () => {
  it('fills in defaults and interpolates environment variables', () => {
    const config = parseConfigText(minimal, 'tollgate.yaml', { UPSTREAM_KEY: 'secret-value' });
    expect(config.providers[0]?.api_key).toBe('secret-value');
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 8080 });
    expect(config.storage.url).toBe('sqlite://./data/tollgate.db');
    expect(config.upstream).toEqual({ connect_timeout_ms: 5000, timeout_ms: 120000, idle_timeout_ms: 60000 });
    expect(config.tiers.free?.endpoints).toEqual(['*']);
    expect(config.models[0]?.max_output_tokens).toBe(4096);
  });

  it('gives a whole-variable value its type and supports defaults', () => {
    const config = parseConfigText(`${minimal}\nserver: { port: "\${PORT}", host: "\${HOST_X:-0.0.0.0}" }\n`, 'f', { UPSTREAM_KEY: 'k', PORT: '9090' });
    expect(config.server.port).toBe(9090);
    expect(config.server.host).toBe('0.0.0.0');
  });

  it('gives a variable the type of its field: a token of digits stays a string, a flag becomes a boolean', () => {
    const text = `${minimal.replace('api_key: ${UPSTREAM_KEY}', 'api_key: "${UPSTREAM_KEY}"')}\nserver: { admin_token: "\${TOKEN}" }\nmetrics: { enabled: "\${METRICS}" }\n`;
    const config = parseConfigText(text, 'f', { UPSTREAM_KEY: '0123456789', TOKEN: '12345678901234567890', METRICS: 'false' });
    expect(config.providers[0]?.api_key).toBe('0123456789');
    expect(config.server.admin_token).toBe('12345678901234567890');
    expect(config.metrics.enabled).toBe(false);
    expect(() => parseConfigText(`${minimal}\nserver: { port: "\${PORT}" }\n`, 'f', { UPSTREAM_KEY: 'k', PORT: 'eighty' })).toThrow('server.port');
    // Under a named tier and in a list; a size, which takes text too, stays text and is read as a size.
    const text2 = `${minimal.replace('free: { models: ["llama*"] }', 'free: { models: ["llama*"], limits: { requests_per_minute: "${RPM}" } }')}\nserver: { body_limit: "\${LIMIT}" }\n`;
    const sized = parseConfigText(text2, 'f', { UPSTREAM_KEY: 'k', LIMIT: '1048576', RPM: '60' });
    expect(sized.server.body_limit).toBe('1048576');
    expect(sized.tiers.free?.limits.requests_per_minute).toBe(60);
  });

  it.each([
    ['an empty host', `${minimal}\nserver: { host: }\n`, 'server.host'],
    ['a null port', `${minimal}\nserver: { port: ~ }\n`, 'server.port'],
    ['a token written as a bare number', `${minimal}\nserver: { admin_token: 12345678901234567890 }\n`, 'server.admin_token'],
    ['a boolean given as a number', `${minimal}\nmetrics: { enabled: 0 }\n`, 'metrics.enabled'],
    ['a body limit of zero', `${minimal}\nserver: { body_limit: 0 }\n`, 'server.body_limit'],
  ])('converts nothing written in the file itself: %s is refused', (_name, text, field) => {
    expect(() => parseConfigText(text, 'f', { UPSTREAM_KEY: 'k' })).toThrow(field);
  });

  it('names the field and the variable when a variable is missing', () => {
    const err = configError(minimal, {});
    expect(err.message).toBe('tollgate.yaml: providers[0].api_key: environment variable UPSTREAM_KEY is not set (write ${UPSTREAM_KEY:-default} to give a default)');
  });

  it.each([
    [minimal.replace('kind: openai', 'kind: opnai'), 'providers[0].kind', 'must be one of openai, anthropic, gemini, mock'],
    [minimal.replace('context_window: 8192', 'context_window: -1'), 'models[0].context_window', '>= 1'],
    [minimal.replace('provider: local,', 'provider: nowhere,'), 'models[0].routes[0].provider', 'unknown provider "nowhere"'],
    [`${minimal}\nsurprise: 1\n`, 'surprise', 'not a known field'],
    [minimal.replace('    base_url: http://127.0.0.1:8000/v1\n', ''), 'providers[0].base_url', 'required for kind openai'],
    [minimal.replace('base_url: http://127.0.0.1:8000/v1', 'base_url: "http://"'), 'providers[0].base_url', 'not a valid URL'],
    [`${minimal}\naccounts: [{ id: a, tier: gold }]\n`, 'accounts[0].tier', 'unknown tier "gold"'],
    [`${minimal}\naccounts: [{ id: a, tier: free, keys: [{ key: not-a-key }] }]\n`, 'accounts[0].keys[0].key', 'not a Tollgate key'],
    [`${minimal}\nserver: { body_limit: lots }\n`, 'server.body_limit', ''],
    [`${minimal}\nstorage: { url: "sqlite://" }\n`, 'storage.url', 'not a valid storage URL'],
    [`${minimal}\nstorage: { url: "postgres://[bad" }\n`, 'storage.url', 'not a valid storage URL'],
    [minimal.replace('free: { models: ["llama*"] }', 'free: { models: ["llama*"], endpoints: [chat/completion] }'), 'tiers.free.endpoints', '["chat/completion"] matches no endpoint, so it would refuse every request (endpoints: chat/completions, responses,'],
    [`${minimal}\naccounts: [{ id: a, tier: free, keys: [{ key: "${scopedKey}", scope: { endpoints: ["img*", "moderations"] } }] }]\n`, 'accounts[0].keys[0].scope.endpoints', 'matches no endpoint'],
    [`${minimal}\naccounts: [{ id: a, tier: free, keys: [{ key: "${scopedKey}", scope: { sdks: [openai-node] } }] }]\n`, 'accounts[0].keys[0].scope.sdks', 'matches no SDK'],
    [`${minimal}\naccounts: [{ id: a, tier: free, keys: [{ key: "${scopedKey}", scope: { endpoints: [] } }] }]\n`, 'accounts[0].keys[0].scope.endpoints', 'matches no endpoint'],
  ])('reports one clear message naming the field (%#)', (text, field, detail) => {
    const err = configError(text);
    expect(err.message.startsWith(`tollgate.yaml: ${field}: `)).toBe(true);
    expect(err.message).toContain(detail);
  });

  it('reports YAML syntax errors with their line', () => {
    expect(configError('providers: [\n  - id: x\n').message).toMatch(/^tollgate.yaml: is not valid YAML \(line \d+/);
  });

  it('takes a list of endpoints of which one names an endpoint this gateway lacks, beside ones it has', () => {
    const config = parseConfigText(minimal.replace('free: { models: ["llama*"] }', 'free: { models: ["llama*"], endpoints: [chat/completions, moderations, "audio/*"] }'), 'f', { UPSTREAM_KEY: 'k' });
    expect(config.tiers.free?.endpoints).toEqual(['chat/completions', 'moderations', 'audio/*']);
  });

  it('accepts bootstrap accounts with real keys and scopes', () => {
    const { key } = generateApiKey();
    const config = parseConfigText(`${minimal}\naccounts:\n  - id: team-a\n    tier: free\n    credits: 25.5\n    keys:\n      - key: \${TEAM_KEY}\n        scope: { models: [llama], sdks: [openai-js] }\n`, 'f', { UPSTREAM_KEY: 'k', TEAM_KEY: key });
    expect(config.accounts[0]?.keys[0]).toMatchObject({ key, status: 'active', scope: { models: ['llama'], sdks: ['openai-js'] } });
  });
});

/** The minimal configuration with `value` at `path` (dots and [i]), written as YAML flow text. */
function withField(path: string, value: unknown, base = minimal): string {
  const keys = path.split('.');
  const nested = keys.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
  return `${base}\n${Object.entries(nested as object).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join('\n')}\n`;
}

describe('configuration checks', () => {
  it.each([['free tier'], ['_x'], ['-pro'], ['a'.repeat(129)]])('refuses the tier name %j, which skipped every check of its tier', (name) => {
    const text = minimal.replace('free: { models: ["llama*"] }', `free: { models: ["llama*"] }\n  ${JSON.stringify(name)}: { limits: { requests_per_minute: -5 } }`);
    const err = configError(text);
    expect(err.field).toBe('tiers');
    expect(err.message).toContain(`has an invalid key ${JSON.stringify(name)} (keys must be an identifier: 1 to 128 letters, digits and . _ : / -, starting with a letter or digit)`);
  });

  it('refuses a provider header name the header map does not check (one with a line break)', () => {
    const text = minimal.replace('    api_key: ${UPSTREAM_KEY}', '    api_key: ${UPSTREAM_KEY}\n    headers: { "X-A\\nB": 5 }');
    expect(configError(text).message).toContain('providers[0].headers: has an invalid key "X-A\\nB"');
  });

  const mockProvider = minimal.replace('providers:\n', 'providers:\n  - { id: m, kind: mock }\n');
  const timerFields = [
    'server.max_event_loop_delay_ms',
    'server.shutdown_timeout_ms',
    'server.body_idle_timeout_ms',
    'upstream.connect_timeout_ms',
    'upstream.timeout_ms',
    'upstream.idle_timeout_ms',
    'generation.budget_ms',
    'videos.poll_interval_ms',
    'videos.lease_ms',
    'videos.give_up_after_ms',
    'routing.avoid_failed_route_ms',
    'routing.circuit_breaker.window_ms',
    'routing.circuit_breaker.cooldown_ms',
    'routing.circuit_breaker.max_retry_after_ms',
  ];
  it.each(timerFields)('caps %s at 2147483647 ms, the longest delay a Node.js timer keeps', (field) => {
    const refused = configError(withField(field, 2_147_483_648, mockProvider));
    expect(refused.field).toBe(field);
    expect(refused.message).toContain('must be at most 2147483647 ms (about 24.8 days), the longest delay a Node.js timer keeps: a longer one fires after 1 ms');
    expect(() => parseConfigText(withField(field, 2_147_483_647, mockProvider), 'f', { UPSTREAM_KEY: 'k' })).not.toThrow();
  });

  it.each([
    ['redis.command_timeout_ms', `${minimal}\nredis: { url: "redis://127.0.0.1:6379", command_timeout_ms: 2147483648 }\n`],
    ['models[0].budget_ms', minimal.replace('context_window: 8192', 'context_window: 8192\n    budget_ms: 2147483648')],
    ['providers[0].mock.latency_ms', mockProvider.replace('{ id: m, kind: mock }', '{ id: m, kind: mock, mock: { latency_ms: 2147483648 } }')],
    ['providers[0].mock.chunk_delay_ms', mockProvider.replace('{ id: m, kind: mock }', '{ id: m, kind: mock, mock: { chunk_delay_ms: 2147483648 } }')],
    ['providers[0].mock.video_ms', mockProvider.replace('{ id: m, kind: mock }', '{ id: m, kind: mock, mock: { video_ms: 2147483648 } }')],
  ])('caps %s too', (field, text) => {
    const refused = configError(text);
    expect(refused.field).toBe(field);
    expect(refused.message).toContain('must be at most 2147483647 ms');
  });

  it('says what a field with a format must be, never "must match undefined"', () => {
    expect(configError(`${minimal}\nstorage: { url: "mysql://db" }\n`).message).toBe('tollgate.yaml: storage.url: must be a sqlite://PATH or postgres:// URL');
    expect(configError(minimal.replace('- id: llama', '- id: "llama 3"')).message).toBe(
      'tollgate.yaml: models[0].id: must be an identifier: 1 to 128 letters, digits and . _ : / -, starting with a letter or digit',
    );
    const size = configError(`${minimal}\nserver: { body_limit: lots }\n`).message;
    expect(size).toBe('tollgate.yaml: server.body_limit: must be a byte count, or a size such as "512kb" or "4mb" (b, kb, mb, gb in either case; powers of 1024) (got "lots")');
  });

  it.each([['4MB', 4 * 1024 ** 2], ['512Kb', 512 * 1024], ['1.5 GB', 1.5 * 1024 ** 3], ['10B', 10], ['2G', 2 * 1024 ** 3]])('takes the size %s in upper case, as parseSize does', (size, bytes) => {
    const config = parseConfigText(`${minimal}\nserver: { body_limit: "${size}" }\nuploads: { max_bytes: "${size}" }\nvideos: { max_bytes: "${size}" }\n`, 'f', { UPSTREAM_KEY: 'k' });
    expect(parseSize(config.server.body_limit!)).toBe(bytes);
    expect(parseSize(config.uploads.max_bytes)).toBe(bytes);
    expect(parseSize(config.videos.max_bytes)).toBe(bytes);
  });

  it.each(['server.body_limit', 'uploads.max_bytes', 'videos.max_bytes'].flatMap((field) => ['0', '0kb', '0.1b', '0.5', ' 0 mb '].map((size) => [field, size])))('refuses %s: %j, which is less than 1 byte', (field, size) => {
    const err = configError(withField(field, size));
    expect(err.field).toBe(field);
    expect(err.message).toContain(`is ${JSON.stringify(size)}, less than 1 byte; give at least 1 byte`);
  });

  it('refuses a route upstream model name over 256 characters, which no usage record could hold', () => {
    const err = configError(minimal.replace('model: meta-llama/Llama-3.1-8B', `model: ${'m'.repeat(257)}`));
    expect(err.field).toBe('models[0].routes[0].model');
    expect(() => parseConfigText(minimal.replace('model: meta-llama/Llama-3.1-8B', `model: ${'m'.repeat(256)}`), 'tollgate.yaml', { UPSTREAM_KEY: 'x' })).not.toThrow();
  });

  it('refuses an empty server.host, which would listen on every interface', () => {
    expect(configError(`${minimal}\nserver: { host: "" }\n`).message).toBe('tollgate.yaml: server.host: must not be empty');
  });

  it.each([
    ['tiers.free.models', minimal.replace('free: { models: ["llama*"] }', 'free: { models: [] }')],
    ['accounts[0].keys[0].scope.models', `${minimal}\naccounts: [{ id: a, tier: free, keys: [{ key: "${scopedKey}", scope: { models: [] } }] }]\n`],
  ])('refuses an empty list of models at %s, which would refuse every request', (field, text) => {
    const err = configError(text);
    expect(err.field).toBe(field);
    expect(err.message).toContain('is empty, so it would refuse every request (leave it out to allow every model)');
  });

  it.each([
    ['${OPENAI-API-KEY}', '"${OPENAI-API-KEY}"'],
    ['${ UPSTREAM_KEY }', '"${ UPSTREAM_KEY }"'],
    ['${TOKEN', '"${TOKEN"'],
    ['${1TOKEN}', '"${1TOKEN}"'],
    ['${}', '"${}"'],
    ['${UPSTREAM_KEY:x}', '"${UPSTREAM_KEY:x}"'],
    ['prefix-${UPSTREAM_KEY}-${bad name}', '"${bad name}"'],
    ['${A:-${UPSTREAM_KEY}}', '"${A:-${UPSTREAM_KEY}"'],
  ])('refuses the malformed reference %s rather than sending it as text', (value, shown) => {
    const err = configError(minimal.replace('api_key: ${UPSTREAM_KEY}', `api_key: ${JSON.stringify(value)}`));
    expect(err.field).toBe('providers[0].api_key');
    expect(err.message).toContain(shown);
    expect(err.message).toContain('write ${NAME} or ${NAME:-default}');
  });

  it('shows no more of a malformed reference than its first 40 characters', () => {
    const secret = 'S'.repeat(60);
    const err = configError(minimal.replace('api_key: ${UPSTREAM_KEY}', `api_key: "\${${secret}"`));
    expect(err.message).not.toContain(secret);
  });

  it('still takes $${ as a literal ${, and well-formed references beside it', () => {
    // A function as replace()'s replacement: a replacement string would read $$ as one $.
    const config = parseConfigText(minimal.replace('api_key: ${UPSTREAM_KEY}', () => 'api_key: "$${NOT_A_VAR}-${UPSTREAM_KEY}-${MISSING:-dflt}"'), 'f', { UPSTREAM_KEY: 'k' });
    expect(config.providers[0]?.api_key).toBe('${NOT_A_VAR}-k-dflt');
  });

  it.each([
    ['a list', 'x: &x [*x]', 'x[0]'],
    ['a mapping', 'x: &x { y: [1, *x] }', 'x.y[1]'],
  ])('reports a YAML alias inside its own anchor (%s) as a configuration error naming where', (_what, yaml, field) => {
    const err = configError(`${minimal}\n${yaml}\n`);
    expect(err.field).toBe(field);
    expect(err.message).toBe(`tollgate.yaml: ${field}: contains itself (a YAML alias inside its own anchor)`);
  });

  it('takes the same anchor used twice, which is no cycle', () => {
    const config = parseConfigText(minimal.replace('routes: [{ provider: local, model: meta-llama/Llama-3.1-8B }]', 'routes: &r [{ provider: local, model: m }]\n  - id: llama2\n    capabilities: [chat]\n    context_window: 8192\n    routes: *r'), 'f', { UPSTREAM_KEY: 'k' });
    expect(config.models[1]?.routes[0]?.model).toBe('m');
  });

  it('refuses an account id shaped like an API key, without repeating it', () => {
    const { key } = generateApiKey();
    const err = configError(`${minimal}\naccounts: [{ id: "${key}", tier: free }]\n`);
    expect(err.field).toBe('accounts[0].id');
    expect(err.message).toContain('has the shape of an API key');
    expect(err.message).not.toContain(key.slice(19));
  });

  it.each([[' leading-space-admin-token'], ['trailing-space-admin-token '], ['trailing-newline-admin-token\n'], ['\ttab-before-admin-token']])('refuses an admin token with whitespace at an end (%j), which no header can carry', (token) => {
    const err = configError(`${minimal}\nserver: { admin_token: ${JSON.stringify(token)} }\n`);
    expect(err.field).toBe('server.admin_token');
    expect(err.message).toContain('without spaces at either end');
    expect(err.message).not.toContain(token.trim());
  });

  it('takes an admin token with a space inside, which a header carries', () => {
    expect(parseConfigText(`${minimal}\nserver: { admin_token: "an admin token with spaces" }\n`, 'f', { UPSTREAM_KEY: 'k' }).server.admin_token).toBe('an admin token with spaces');
  });

  it.each([['0.0000001'], ['1.0000005'], ['250.1234567'], ['1e-7']])('refuses credits of %s, which have more than six decimals', (credits) => {
    const err = configError(`${minimal}\naccounts: [{ id: a, tier: free, credits: ${credits} }]\n`);
    expect(err.field).toBe('accounts[0].credits');
    expect(err.message).toContain('may have at most 6 decimal places');
  });

  it.each([['0.000001'], ['250.5'], ['0.1'], ['1234567.123456'], ['8999999999.5'], ['9000000000']])('takes credits of %s', (credits) => {
    expect(parseConfigText(`${minimal}\naccounts: [{ id: a, tier: free, credits: ${credits} }]\n`, 'f', { UPSTREAM_KEY: 'k' }).accounts[0]?.credits).toBe(Number(credits));
  });
});
