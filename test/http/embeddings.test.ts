/**
 * POST /v1/embeddings, black box: the official SDK against a listening gateway, with the mock
 * provider, the OpenAI adapter against the local OpenAI stand-in, and an Anthropic route (which
 * implements no embeddings: the canonical 501).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { FAKE_OPENAI_KEY, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.js';
import { FAKE_EMBEDDING_DIMENSIONS } from '../fakes/openai-embeddings.js';

const price = { input_per_million_tokens: 2_000, output_per_million_tokens: 0 };
const embedModel = (id: string, routes: unknown[]) => ({ id, capabilities: ['embeddings'], context_window: 8192, price, routes });

let upstream: FakeOpenAI;
let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeOpenAI();
  gw = await startGateway({
    accounts: { acct: 'standard', capped: 'capped' },
    keys: { main: { account: 'acct' }, capped: { account: 'capped' } },
    config: {
      providers: [
        { id: 'mock', kind: 'mock' },
        { id: 'broken', kind: 'mock', mock: { fail_status: 500 } },
        { id: 'openai', kind: 'openai', base_url: upstream.url, api_key: FAKE_OPENAI_KEY },
        { id: 'claude', kind: 'anthropic', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-ant-unused' },
      ],
      models: [
        embedModel('mock-embed', [{ provider: 'mock', model: 'mock-embedder' }]),
        embedModel('openai-embed', [{ provider: 'openai', model: 'text-embedding-3-small' }]),
        embedModel('claude-embed', [{ provider: 'claude', model: 'claude-3-haiku' }]),
        embedModel('failover-embed', [{ provider: 'broken', model: 'b', priority: 1 }, { provider: 'mock', model: 'm', priority: 2 }]),
        { id: 'mock-chat', capabilities: ['chat'], context_window: 4096, routes: [{ provider: 'mock', model: 'mock-upstream' }] },
      ],
      tiers: {
        standard: { models: ['*'], endpoints: ['*'] },
        capped: { models: ['*'], endpoints: ['*'], limits: { daily: { embeddings: 1 } } },
      },
    },
  });
  client = new OpenAI({ apiKey: gw.keys.main!, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests reach into arbitrary response fields.
type Json = Record<string, any>;

async function post(body: unknown, key = gw.keys.main!): Promise<{ status: number; headers: Headers; json: Json }> {
  const res = await fetch(`${gw.baseURL}/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Json };
}

describe('POST /v1/embeddings', () => {
  it('answers the official SDK (which asks for base64 and decodes it) with unit vectors from the mock', async () => {
    const result = await client.embeddings.create({ model: 'mock-embed', input: 'The food was delicious' });
    expect(result.object).toBe('list');
    expect(result.data).toHaveLength(1);
    const vector = result.data[0]!.embedding;
    expect(vector).toHaveLength(64);
    expect(Math.abs(Math.hypot(...vector) - 1)).toBeLessThan(1e-4);
    expect(result.usage.prompt_tokens).toBeGreaterThan(0);
    // Deterministic: the same text, the same vector.
    const again = await client.embeddings.create({ model: 'mock-embed', input: 'The food was delicious', encoding_format: 'float' });
    expect(again.data[0]!.embedding.map((v) => Math.fround(v))).toEqual(vector.map((v) => Math.fround(v)));
  });

  it('keeps the order of several inputs and honours dimensions', async () => {
    const result = await client.embeddings.create({ model: 'mock-embed', input: ['first', 'second', 'third'], dimensions: 8, encoding_format: 'float' });
    expect(result.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(result.data.every((d) => d.embedding.length === 8)).toBe(true);
    const single = await client.embeddings.create({ model: 'mock-embed', input: 'second', dimensions: 8, encoding_format: 'float' });
    expect(single.data[0]!.embedding).toEqual(result.data[1]!.embedding);
  });

  it('relays an OpenAI-compatible upstream as it answered, in the encoding the caller asked for', async () => {
    const floats = await post({ model: 'openai-embed', input: ['a b c', 'd e'], encoding_format: 'float' });
    expect(floats.status).toBe(200);
    expect(floats.json.data[1].embedding).toHaveLength(FAKE_EMBEDDING_DIMENSIONS);
    expect(floats.json.data[1].embedding[0]).toBe(1);
    expect(floats.json.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1/embeddings');
    expect(sent.body).toEqual({ model: 'text-embedding-3-small', input: ['a b c', 'd e'], encoding_format: 'float' });

    const viaSdk = await client.embeddings.create({ model: 'openai-embed', input: 'hello world' });
    expect(upstream.requests.at(-1)!.body.encoding_format).toBe('base64');
    expect(viaSdk.data[0]!.embedding).toEqual(Array.from(Float32Array.from({ length: FAKE_EMBEDDING_DIMENSIONS }, (_, p) => p / 100)));
  });

  it('charges the prompt tokens at the model’s input price', async () => {
    const before = (await gw.gateway.store.getAccount('acct'))!.balanceMicros;
    const result = await post({ model: 'openai-embed', input: 'one two three four', encoding_format: 'float' });
    expect(result.status).toBe(200);
    const after = (await gw.gateway.store.getAccount('acct'))!.balanceMicros;
    // 4 tokens at 2,000 credits a million tokens: 0.008 credits.
    expect(before - after).toBe(8_000);
  });

  it('fails over to the next route when the first fails', async () => {
    const result = await post({ model: 'failover-embed', input: 'x', encoding_format: 'float' });
    expect(result.status).toBe(200);
    expect(result.json.model).toBe('m');
  });

  it.each([
    [{ model: 'mock-embed' }, 'missing_required_parameter', 'input'],
    [{ model: 'mock-embed', input: [] }, 'invalid_parameter', 'input'],
    [{ model: 'mock-embed', input: '' }, 'invalid_parameter', 'input'],
    [{ model: 'mock-embed', input: 'x', dimensions: 0 }, 'invalid_parameter', 'dimensions'],
    [{ model: 'mock-embed', input: 'x', encoding_format: 'hex' }, 'invalid_parameter', 'encoding_format'],
    [{ input: 'x' }, 'missing_required_parameter', 'model'],
  ])('refuses %j with 400 %s naming %s', async (body, code, param) => {
    const result = await post(body);
    expect(result.status).toBe(400);
    expect(result.json.error).toMatchObject({ type: 'invalid_request_error', code, param });
  });

  it('answers 404 for an unknown model and 422 for a model without embeddings', async () => {
    const unknown = await post({ model: 'no-such-model', input: 'x' });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toMatchObject({ type: 'not_found_error', code: 'model_not_found', param: 'model' });
    const chatOnly = await post({ model: 'mock-chat', input: 'x' });
    expect(chatOnly.status).toBe(422);
    expect(chatOnly.json.error).toMatchObject({ type: 'invalid_request_error', code: 'model_capability_missing' });
    expect(chatOnly.json.error.message).toContain('embeddings');
  });

  it('answers 501 when no route’s adapter implements embeddings for the model (Anthropic)', async () => {
    const result = await post({ model: 'claude-embed', input: 'x' });
    expect(result.status).toBe(501);
    expect(result.json.error).toMatchObject({ type: 'server_error', code: 'capability_not_implemented' });
    expect(result.json.error.message).toContain('embeddings');
    expect(result.json.error.message).toContain('claude-embed');
  });

  it('has a daily cap of its own, apart from chat', async () => {
    const key = gw.keys.capped!;
    expect((await post({ model: 'mock-embed', input: 'x' }, key)).status).toBe(200);
    const capped = await post({ model: 'mock-embed', input: 'x' }, key);
    expect(capped.status).toBe(429);
    expect(capped.json.error.code).toBe('daily_cap_exceeded');
    const chat = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(200);
  });

  it('replays a resend with the same Idempotency-Key', async () => {
    const headers = { 'Idempotency-Key': `embed-${Date.now()}` };
    const first = await client.embeddings.create({ model: 'openai-embed', input: 'same words', encoding_format: 'float' }, { headers });
    const calls = upstream.requests.length;
    const second = await client.embeddings.create({ model: 'openai-embed', input: 'same words', encoding_format: 'float' }, { headers });
    expect(second).toEqual(first);
    expect(upstream.requests.length).toBe(calls);
  });
});
