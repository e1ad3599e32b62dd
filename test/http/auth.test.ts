/** Spec section 5: 401 for missing, malformed, unknown and disabled keys; 403 for tier and scope. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { errorOf, isEnvelope, startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { generateApiKey } from '../../src/auth/api-key.js';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({
    config: {
      providers: [{ id: 'mock', kind: 'mock' }],
      models: [
        { id: 'open-model', capabilities: ['chat', 'streaming'], context_window: 4096, routes: [{ provider: 'mock', model: 'm' }] },
        { id: 'premium-model', capabilities: ['chat', 'streaming'], context_window: 4096, routes: [{ provider: 'mock', model: 'm' }] },
      ],
      tiers: {
        standard: { models: ['open-*'], endpoints: ['*'] },
        listing: { models: ['*'], endpoints: ['models'] },
      },
    },
    accounts: { acct: 'standard', lister: 'listing' },
    keys: {
      main: {},
      disabled: { status: 'disabled' },
      premiumScoped: { scope: { models: ['premium-model'] } },
      curlOnly: { scope: { sdks: ['curl'] } },
      openaiOnly: { scope: { sdks: ['openai-js'] } },
      modelsOnly: { scope: { endpoints: ['models'] } },
      lister: { account: 'lister' },
    },
  });
});
afterAll(() => gw.close());

const body = (model = 'open-model') => JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] });
const post = (headers: Record<string, string>, model?: string) =>
  fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body(model) });

describe('401 authentication_error', () => {
  it.each([
    ['no Authorization header', {}, 'missing_api_key'],
    ['an empty Authorization header', { authorization: '' }, 'missing_api_key'],
    ['a Basic scheme', { authorization: 'Basic dXNlcjpwYXNz' }, 'malformed_api_key'],
    ['a bearer token that is not a Tollgate key', { authorization: 'Bearer sk-proj-abc123' }, 'invalid_api_key'],
    ['an unknown key', { authorization: `Bearer ${generateApiKey().key}` }, 'invalid_api_key'],
  ])('%s gives code %s', async (_what, headers, code) => {
    const { status, requestId, body: envelope } = await errorOf(await post(headers));
    expect(status).toBe(401);
    expect(requestId).toMatch(/^req_/);
    expect(isEnvelope(envelope)).toBe(true);
    expect(envelope.error).toMatchObject({ type: 'authentication_error', code, param: null });
  });

  it('gives invalid_api_key for a known id with a wrong secret', async () => {
    const real = gw.keys.main!;
    const forged = real.slice(0, -4) + (real.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const { status, body: envelope } = await errorOf(await post({ authorization: `Bearer ${forged}` }));
    expect(status).toBe(401);
    expect(envelope.error.code).toBe('invalid_api_key');
  });

  it('gives api_key_disabled for a disabled key', async () => {
    const { status, body: envelope } = await errorOf(await post({ authorization: `Bearer ${gw.keys.disabled}` }));
    expect(status).toBe(401);
    expect(envelope.error).toMatchObject({ type: 'authentication_error', code: 'api_key_disabled' });
  });

  it('raises AuthenticationError in the openai SDK, with the request id', async () => {
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: generateApiKey().key, maxRetries: 0 });
    const err = await client.models.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key');
    expect((err as InstanceType<typeof OpenAI.AuthenticationError>).requestID).toMatch(/^req_/);
  });

  it.each([
    ['malformed JSON', 'application/json', '{'],
    ['a content type the route does not take', 'text/plain', 'hello'],
    ['a body over the size limit', 'application/json', JSON.stringify({ model: 'open-model', messages: [{ role: 'user', content: 'x'.repeat(5 * 1024 * 1024) }] })],
  ])('checks the key before reading the body: %s without a key is 401, not 400 or 413', async (_what, contentType, payload) => {
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': contentType }, body: payload });
    const { status, requestId, body: envelope } = await errorOf(res);
    expect(status).toBe(401);
    expect(requestId).toMatch(/^req_/);
    expect(envelope.error).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' });
  });

  it('still answers 400 for malformed JSON sent with a valid key', async () => {
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.keys.main}` }, body: '{' });
    const { status, body: envelope } = await errorOf(res);
    expect(status).toBe(400);
    expect(envelope.error.type).toBe('invalid_request_error');
  });

  it('never echoes the presented key', async () => {
    const key = generateApiKey().key;
    const text = await (await post({ authorization: `Bearer ${key}` })).text();
    expect(text).not.toContain(key);
  });
});

describe('403 permission_error', () => {
  it('refuses a model the tier does not allow', async () => {
    const { status, body: envelope } = await errorOf(await post({ authorization: `Bearer ${gw.keys.main}` }, 'premium-model'));
    expect(status).toBe(403);
    expect(envelope.error).toMatchObject({ type: 'permission_error', code: 'model_not_allowed', param: 'model' });
    expect(envelope.error.message).toContain('standard');
  });

  it('refuses a model outside the key scope even when the tier allows it', async () => {
    const { status, body: envelope } = await errorOf(await post({ authorization: `Bearer ${gw.keys.premiumScoped}` }, 'open-model'));
    expect(status).toBe(403);
    expect(envelope.error.code).toBe('model_not_allowed');
    expect(envelope.error.message).toContain('scope');
  });

  it('refuses an endpoint the key scope does not include', async () => {
    const { status, body: envelope } = await errorOf(await post({ authorization: `Bearer ${gw.keys.modelsOnly}` }));
    expect(status).toBe(403);
    expect(envelope.error).toMatchObject({ type: 'permission_error', code: 'endpoint_not_allowed' });
    const list = await fetch(`${gw.baseURL}/models`, { headers: { authorization: `Bearer ${gw.keys.modelsOnly}` } });
    expect(list.status).toBe(200);
  });

  it('refuses an endpoint the tier does not include', async () => {
    const { status, body: envelope } = await errorOf(await post({ authorization: `Bearer ${gw.keys.lister}` }));
    expect(status).toBe(403);
    expect(envelope.error.code).toBe('endpoint_not_allowed');
  });

  it('refuses an SDK the key scope does not include, recognised from the SDK headers', async () => {
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.curlOnly!, maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'open-model', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((err as InstanceType<typeof OpenAI.PermissionDeniedError>).code).toBe('sdk_not_allowed');
    const viaCurl = await post({ authorization: `Bearer ${gw.keys.curlOnly}`, 'user-agent': 'curl/8.5.0' });
    expect(viaCurl.status).toBe(200);
  });

  it('admits the SDK a key is scoped to', async () => {
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.openaiOnly!, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'open-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0]?.message.content).toContain('mock reply');
    const viaCurl = await post({ authorization: `Bearer ${gw.keys.openaiOnly}`, 'user-agent': 'curl/8.5.0' });
    expect(viaCurl.status).toBe(403);
  });
});
