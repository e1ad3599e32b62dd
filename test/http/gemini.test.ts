/**
 * The Gemini adapter behind a listening gateway, driven by the official openai SDK: chat, a
 * stream, embeddings, and an upstream error, against the local Gemini stand-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { FAKE_DEFAULT_TEXT, FAKE_EMBEDDING_DIMENSIONS, FAKE_GEMINI_API_KEY, startFakeGemini, type FakeGemini } from '../fakes/gemini-server.js';

let upstream: FakeGemini;
let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeGemini();
  gw = await startGateway({
    config: {
      providers: [{ id: 'google', kind: 'gemini', base_url: upstream.url, api_key: FAKE_GEMINI_API_KEY }],
      models: [
        { id: 'gemini-flash', capabilities: ['chat', 'streaming', 'tools'], context_window: 100_000, routes: [{ provider: 'google', model: 'gemini-2.5-flash' }] },
        { id: 'gemini-embed', capabilities: ['embeddings'], context_window: 8192, routes: [{ provider: 'google', model: 'gemini-embedding-001' }] },
      ],
    },
  });
  client = new OpenAI({ apiKey: gw.keys.main!, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

describe('Gemini through the gateway', () => {
  it('answers a chat completion in OpenAI’s shape, and sends Gemini’s request with the key in its header', async () => {
    upstream.behave({ kind: 'ok' });
    const completion = await client.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] });
    expect(completion.choices[0]!.message.content).toBe(FAKE_DEFAULT_TEXT);
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage!.prompt_tokens).toBeGreaterThan(0);
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toContain('/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe(FAKE_GEMINI_API_KEY);
    expect(sent.body.systemInstruction).toBeDefined();
  });

  it('streams chunks the SDK assembles into the whole text', async () => {
    upstream.behave({ kind: 'ok' });
    const stream = await client.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(FAKE_DEFAULT_TEXT);
    expect(usage).not.toBeNull();
  });

  it('makes embeddings', async () => {
    const result = await client.embeddings.create({ model: 'gemini-embed', input: ['one', 'two'] });
    expect(result.data.map((d) => d.index)).toEqual([0, 1]);
    expect(result.data[0]!.embedding).toHaveLength(FAKE_EMBEDDING_DIMENSIONS);
  });

  it('refuses with 422, before Gemini sees it, what Gemini would refuse after admission, naming the field', async () => {
    upstream.behave({ kind: 'ok' });
    const sentBefore = upstream.requests.length;
    const refused = [
      { body: { messages: [{ role: 'user', content: 'Hi' }], tools: [{ type: 'function', function: { name: '1password_lookup' } }] }, param: 'tools[0].function.name' },
      { body: { messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello' }] }, param: 'messages[1]' },
    ];
    for (const { body, param } of refused) {
      const res = await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gemini-flash', ...body }),
      });
      const error = ((await res.json()) as { error: { code: string; param: string } }).error;
      expect([res.status, error.code, error.param]).toEqual([422, 'incompatible_parameters', param]);
    }
    expect(upstream.requests.length).toBe(sentBefore);
  });

  it('maps an overloaded Gemini to 503 with its Retry-After, never showing the provider key', async () => {
    upstream.behave({ kind: 'error', status: 503, grpcStatus: 'UNAVAILABLE', message: 'The model is overloaded.', retryAfter: '3', echoKey: true });
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gemini-flash', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    const text = await res.text();
    expect(res.status).toBe(503);
    expect(JSON.parse(text).error.code).toBe('upstream_unavailable');
    expect(res.headers.get('retry-after')).toBe('3');
    expect(text).not.toContain(FAKE_GEMINI_API_KEY);
    upstream.behave({ kind: 'ok' });
  });
});
