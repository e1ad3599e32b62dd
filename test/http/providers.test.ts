/**
 * User step 3 of the core issue: the official openai SDK, unchanged, lists models, gets a
 * completion and streams one against each provider kind, through the gateway, with the providers
 * played by local servers that speak their real wire formats.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { errorOf, startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { FAKE_DEFAULT_REPLY, FAKE_OPENAI_KEY, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.js';
import { FAKE_ANTHROPIC_API_KEY, FAKE_DEFAULT_TEXT, startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-server.js';

let openaiUpstream: FakeOpenAI;
let anthropicUpstream: FakeAnthropic;
let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  openaiUpstream = await startFakeOpenAI();
  anthropicUpstream = await startFakeAnthropic();
  gw = await startGateway({
    config: {
      // Each test sets the fake's behaviour afresh: no route health carried from one test to the next.
      routing: { circuit_breaker: { consecutive_failures: 1000, max_retry_after_ms: 1 } },
      providers: [
        { id: 'oai', kind: 'openai', base_url: openaiUpstream.url, api_key: FAKE_OPENAI_KEY },
        { id: 'oai-badkey', kind: 'openai', base_url: openaiUpstream.url, api_key: 'sk-wrong-key' },
        { id: 'claude', kind: 'anthropic', base_url: anthropicUpstream.url, api_key: FAKE_ANTHROPIC_API_KEY },
        { id: 'mock', kind: 'mock' },
      ],
      models: [
        { id: 'gpt-test', capabilities: ['chat', 'streaming', 'tools'], context_window: 8192, routes: [{ provider: 'oai', model: 'gpt-4o-mini' }] },
        { id: 'gpt-badkey', capabilities: ['chat', 'streaming'], context_window: 8192, routes: [{ provider: 'oai-badkey', model: 'gpt-4o-mini' }] },
        { id: 'claude-test', capabilities: ['chat', 'streaming', 'tools'], context_window: 8192, max_output_tokens: 1000, routes: [{ provider: 'claude', model: 'claude-sonnet-4-5' }] },
        { id: 'mock-test', capabilities: ['chat', 'streaming'], context_window: 8192, routes: [{ provider: 'mock', model: 'mock' }] },
        {
          id: 'claude-then-mock', capabilities: ['chat', 'streaming'], context_window: 8192, max_output_tokens: 1000,
          routes: [{ provider: 'claude', model: 'claude-sonnet-4-5', priority: 1 }, { provider: 'mock', model: 'mock', priority: 2 }],
        },
      ],
      upstream: { timeout_ms: 2000 },
    },
  });
  client = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.main!, maxRetries: 0 });
});
afterEach(() => {
  openaiUpstream.behave({ kind: 'ok' });
  anthropicUpstream.behave({ kind: 'ok' });
});
afterAll(async () => {
  await gw.close();
  await openaiUpstream.close();
  await anthropicUpstream.close();
});

const expected: Record<string, string> = {
  'gpt-test': FAKE_DEFAULT_REPLY,
  'claude-test': FAKE_DEFAULT_TEXT,
  'mock-test': 'This is a mock reply to: Say hello',
};

describe.each(Object.keys(expected))('the openai SDK against %s', (model) => {
  it('lists the model', async () => {
    const ids = (await client.models.list()).data.map((m) => m.id);
    expect(ids).toContain(model);
  });

  it('gets a completion with usage', async () => {
    const completion = await client.chat.completions.create({ model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }] });
    expect(completion.choices[0]?.message.content).toBe(expected[model]);
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
    expect(completion.usage?.total_tokens).toBe((completion.usage?.prompt_tokens ?? 0) + (completion.usage?.completion_tokens ?? 0));
  });

  it('streams a completion, with the usage chunk when asked', async () => {
    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(expected[model]);
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });
});

describe('a stream relayed as the upstream sent it', () => {
  const stream = (headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Say hello' }], stream: true }),
    });
  /** The fake gives each completion an id and a time of its own. */
  const normalised = (text: string): string => text.replaceAll(/"id":"[^"]+"/g, '"id":"x"').replaceAll(/"created":\d+/g, '"created":0');

  it('sends the same frames as when they are rebuilt for an Idempotency-Key, without the usage chunk not asked for', async () => {
    // Without a key the upstream's bytes are written as read; with one the frames are rebuilt, to be recorded.
    const asRead = await (await stream()).text();
    const rebuilt = await (await stream({ 'idempotency-key': `relay-${Date.now()}` })).text();
    expect(normalised(asRead)).toBe(normalised(rebuilt));
    const frames = asRead.split('\n\n');
    expect(frames.pop()).toBe('');
    expect(frames.pop()).toBe('data: [DONE]');
    expect(frames.length).toBeGreaterThan(2);
    for (const frame of frames) {
      expect(frame.startsWith('data: {')).toBe(true);
      const chunk = JSON.parse(frame.slice(6)) as { choices: unknown[]; usage?: unknown };
      expect(chunk.choices).toHaveLength(1);
      expect(chunk.usage).toBeNull();
    }
  });
});

describe('translation and faults through real wire formats', () => {
  it('sends the upstream model name and the provider key upstream, never the caller key', async () => {
    await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], temperature: 0.5, seed: 7 });
    const sent = openaiUpstream.requests.at(-1)!;
    expect(sent.body).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.5, seed: 7 });
    expect(sent.headers.authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`);
    expect(JSON.stringify(sent.headers)).not.toContain(gw.keys.main);
  });

  it('translates a tool call from Anthropic into OpenAI tool_calls', async () => {
    anthropicUpstream.behave({ kind: 'tool_use' });
    const completion = await client.chat.completions.create({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    });
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toBeTypeOf('object');
    const sent = anthropicUpstream.requests.at(-1)!;
    expect(sent.body.max_tokens).toBe(1000);
    expect(sent.body.tools[0]).toMatchObject({ name: 'get_weather', input_schema: { type: 'object' } });
  });

  it('sends Anthropic what it takes from histories OpenAI takes: an untyped tool schema, a reused tool call id', async () => {
    const call = (name: string) => ({ role: 'assistant' as const, content: null, tool_calls: [{ id: 'call_0', type: 'function' as const, function: { name, arguments: '{}' } }] });
    await client.chat.completions.create({
      model: 'claude-test',
      messages: [
        { role: 'user', content: 'go' },
        call('now'),
        { role: 'tool', tool_call_id: 'call_0', content: '12:00' },
        call('now'),
        { role: 'tool', tool_call_id: 'call_0', content: '12:01' },
      ],
      tools: [{ type: 'function', function: { name: 'now', parameters: {} } }],
    });
    const sent = anthropicUpstream.requests.at(-1)!;
    expect(sent.body.tools[0].input_schema).toEqual({ type: 'object' });
    const blocks = (sent.body.messages as Array<{ content: Array<{ type: string; id?: string; tool_use_id?: string }> }>).flatMap((turn) => turn.content);
    const uses = blocks.filter((block) => block.type === 'tool_use').map((block) => block.id);
    const results = blocks.filter((block) => block.type === 'tool_result').map((block) => block.tool_use_id);
    expect(new Set(uses).size).toBe(2);
    expect(results).toEqual(uses);
  });

  it('answers 502 upstream_auth_failed when the provider refuses our key', async () => {
    const err = await client.chat.completions.create({ model: 'gpt-badkey', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_auth_failed');
    expect(String((err as Error).message)).not.toContain('sk-wrong-key');
  });

  it('relays an upstream 400 as 400 with its param', async () => {
    openaiUpstream.behave({ kind: 'error', status: 400, type: 'invalid_request_error', code: 'context_length_exceeded', message: 'This model maximum context length is 8192 tokens.', param: 'messages' });
    const err = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('messages');
    expect(String((err as Error).message)).toContain('maximum context length');
  });

  it('never shows a caller a provider key an upstream echoes, in a message or a param', async () => {
    const ask = (model: string) =>
      fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }),
      });
    anthropicUpstream.behave({ kind: 'error', status: 400, errorType: 'invalid_request_error', message: `bad request with x-api-key ${FAKE_ANTHROPIC_API_KEY}` });
    const anthropic = await ask('claude-test');
    const anthropicText = await anthropic.text();
    expect(anthropic.status).toBe(400);
    expect(anthropicText).not.toContain(FAKE_ANTHROPIC_API_KEY);
    expect(anthropicText).toContain('x-api-key [redacted]');

    openaiUpstream.behave({ kind: 'error', status: 400, type: 'invalid_request_error', code: null, message: 'bad header', param: `header:${FAKE_OPENAI_KEY}` });
    const openai = await errorOf(await ask('gpt-test'));
    expect(openai.status).toBe(400);
    expect(openai.body.error.param).toBeNull();
    expect(JSON.stringify(openai.body)).not.toContain(FAKE_OPENAI_KEY);
  });

  it('answers 503 with Retry-After when Anthropic is overloaded (529)', async () => {
    anthropicUpstream.behave({ kind: 'error', status: 529, errorType: 'overloaded_error', message: 'Overloaded', retryAfter: '4' });
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-test', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).toBe(503);
    // Relayed at most as long as the route's own cool-down cap, 1 ms in this file: the minimum, 1 s.
    // (The adapter's reading of the 4 is checked in its own tests.)
    expect(res.headers.get('retry-after')).toBe('1');
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('service_unavailable');
  });

  it.each([
    ['gpt-test', () => openaiUpstream.behave({ kind: 'cut_stream', afterChunks: 2 })],
    ['claude-test', () => anthropicUpstream.behave({ kind: 'cut_stream', afterEvents: 4 })],
  ])('never lets a stream that %s cuts without a word end silently', async (model, cut) => {
    cut();
    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], stream: true });
    const err = await (async () => {
      for await (const _ of stream) void _;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(String((err as Error).message)).toMatch(/ended the stream|stream/);
  });

  it('delivers an upstream error event mid-stream as an error frame the SDK raises', async () => {
    anthropicUpstream.behave({ kind: 'stream_error', afterEvents: 4 });
    const stream = await client.chat.completions.create({ model: 'claude-test', messages: [{ role: 'user', content: 'x' }], stream: true });
    const err = await (async () => {
      for await (const _ of stream) void _;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
  });

  it('moves a stream to the next route when Anthropic reports an overload right after message_start, before any text', async () => {
    // message_start, an empty text block and a ping, then overloaded_error: nothing reached the caller yet.
    anthropicUpstream.behave({ kind: 'stream_error', afterEvents: 3 });
    const stream = await client.chat.completions.create({ model: 'claude-then-mock', messages: [{ role: 'user', content: 'Say hello' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(expected['mock-test']);
  });

  it('answers 504 when the upstream hangs, and keeps serving others meanwhile', async () => {
    openaiUpstream.behave({ kind: 'hang' });
    const hung = client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    const other = await client.chat.completions.create({ model: 'mock-test', messages: [{ role: 'user', content: 'Say hello' }] });
    expect(other.choices[0]?.message.content).toBe(expected['mock-test']);
    const err = await hung;
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
  });
});
