/** GET /v1/models and GET /v1/models/{model} through the openai SDK: only what the caller may use. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { errorOf, isEnvelope, startGateway, type RunningGateway } from '../support/gateway-harness.js';

let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  gw = await startGateway({
    config: {
      models: [
        { id: 'mock-chat', capabilities: ['chat', 'streaming', 'tools'], context_window: 4096, max_output_tokens: 512, routes: [{ provider: 'mock', model: 'm' }] },
        { id: 'meta/llama-3', capabilities: ['chat'], context_window: 8192, routes: [{ provider: 'mock', model: 'm' }] },
        { id: 'hidden-model', capabilities: ['chat'], context_window: 8192, routes: [{ provider: 'mock', model: 'm' }] },
      ],
      tiers: { standard: { models: ['mock-*', 'meta/*'], endpoints: ['*'] } },
    },
    keys: { main: {}, narrow: { scope: { models: ['mock-chat'] } } },
  });
  client = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.main!, maxRetries: 0 });
});
afterAll(() => gw.close());

describe('models', () => {
  it('lists the models the tier allows, in the OpenAI list shape with capabilities', async () => {
    const page = await client.models.list();
    const ids = page.data.map((m) => m.id).sort();
    expect(ids).toEqual(['meta/llama-3', 'mock-chat']);
    const record = page.data.find((m) => m.id === 'mock-chat') as unknown as Record<string, unknown>;
    expect(record).toMatchObject({ object: 'model', owned_by: 'tollgate', capabilities: ['chat', 'streaming', 'tools'], context_window: 4096, max_output_tokens: 512 });
    expect(typeof record.created).toBe('number');
    expect(JSON.stringify(page.data)).not.toContain('routes');
  });

  it('narrows the list further by the key scope', async () => {
    const narrow = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.narrow!, maxRetries: 0 });
    const page = await narrow.models.list();
    expect(page.data.map((m) => m.id)).toEqual(['mock-chat']);
  });

  it('retrieves one model, including ids with a slash', async () => {
    expect((await client.models.retrieve('mock-chat')).id).toBe('mock-chat');
    const res = await fetch(`${gw.baseURL}/models/meta/llama-3`, { headers: { authorization: `Bearer ${gw.keys.main}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { id: string }).id).toBe('meta/llama-3');
    const encoded = await fetch(`${gw.baseURL}/models/meta%2Fllama-3`, { headers: { authorization: `Bearer ${gw.keys.main}` } });
    expect(encoded.status).toBe(200);
  });

  it('decodes the id once: a malformed or twice-encoded one is an unknown model, not a fault', async () => {
    for (const path of ['%25E0', 'mock%252Dchat']) {
      const { status, body } = await errorOf(await fetch(`${gw.baseURL}/models/${path}`, { headers: { authorization: `Bearer ${gw.keys.main}` } }));
      expect([status, body.error.code]).toEqual([404, 'model_not_found']);
    }
  });

  it('answers 404 not_found_error for an unknown model', async () => {
    const err = await client.models.retrieve('no-such-model').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    const res = await fetch(`${gw.baseURL}/models/no-such-model`, { headers: { authorization: `Bearer ${gw.keys.main}` } });
    const { status, body } = await errorOf(res);
    expect(status).toBe(404);
    expect(isEnvelope(body)).toBe(true);
    expect(body.error).toMatchObject({ type: 'not_found_error', code: 'model_not_found', param: 'model' });
    // The request reached its handler: the error carries the tier's rate-limit headers, as a success would.
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000000');
  });

  it('answers 403 for a model that exists but the tier may not use', async () => {
    const err = await client.models.retrieve('hidden-model').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    const res = await fetch(`${gw.baseURL}/models/hidden-model`, { headers: { authorization: `Bearer ${gw.keys.main}` } });
    expect([res.status, res.headers.get('x-ratelimit-limit')]).toEqual([403, '1000000']);
  });
});
