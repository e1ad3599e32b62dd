import { describe, expect, it } from 'vitest';
import { parseConfigText } from './load.js';
import { ConfigError } from './config-error.js';
import { generateApiKey } from '../auth/api-key.js';

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
