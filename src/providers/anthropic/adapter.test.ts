import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import type { ProviderConfig } from '../../config/schema.js';
import { GatewayError } from '../../errors/index.js';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../protocol/chat.js';
import type { ChatCall, ChatStream, ProviderAdapter, StreamPiece } from '../types.js';
import { FAKE_ANTHROPIC_API_KEY, FAKE_DEFAULT_TEXT, FAKE_TOOL_USE, startFakeAnthropic, type FakeAnthropic } from '../../../test/fakes/anthropic-server.js';
import { createAnthropicAdapter } from './adapter.js';
import { Cancellation } from '../../util/cancellation.js';
import { isRouteFault } from '../../routing/failover.js';

/** FAKE_INPUT_USAGE summed: 21 input + 4 cache writes + 8 cache reads. */
const PROMPT_TOKENS = 33;
/** The default text is six words, and the fake counts a word as a token. */
const TEXT_TOKENS = 6;

let fake: FakeAnthropic;
let adapter: ProviderAdapter;

function provider(overrides: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    id: 'anthropic-test',
    kind: 'anthropic',
    base_url: fake.url,
    api_key: FAKE_ANTHROPIC_API_KEY,
    headers: { 'X-Team': 'gateway' },
    max_connections: 4,
    anthropic_version: '2023-06-01',
    output_cap_field: 'max_completion_tokens',
    ...overrides,
  };
}

function makeCall(request: Partial<ChatCompletionRequest> = {}, signal = new Cancellation().signal): ChatCall {
  return {
    request: { model: 'public-claude', messages: [{ role: 'user', content: 'Hi' }], ...request },
    upstreamModel: 'claude-upstream-1',
    signal,
    requestId: 'req_test_1',
    defaultMaxTokens: 1024,
  };
}

async function collect(stream: ChatStream): Promise<{ pieces: StreamPiece[]; chunks: ChatCompletionChunk[]; error: unknown }> {
  const pieces: StreamPiece[] = [];
  let error: unknown;
  try {
    for await (const batch of stream) pieces.push(...batch);
  } catch (err) {
    error = err;
  }
  return { pieces, chunks: pieces.map((p) => JSON.parse(p.data) as ChatCompletionChunk), error };
}

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

const weatherTool: NonNullable<ChatCompletionRequest['tools']> = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { location: { type: 'string' } } } } },
];

beforeAll(async () => {
  fake = await startFakeAnthropic();
  adapter = createAnthropicAdapter(provider(), { connectTimeoutMs: 2_000 });
});

afterAll(async () => {
  await adapter.close();
  await fake.close();
});

beforeEach(() => {
  fake.behave({ kind: 'ok' });
  fake.requests.length = 0;
});

describe('anthropic adapter: identity', () => {
  it('implements chat, streaming, tools and vision only', () => {
    expect(adapter.id).toBe('anthropic-test');
    expect(adapter.kind).toBe('anthropic');
    for (const c of ['chat', 'streaming', 'tools', 'vision'] as const) expect(adapter.implements(c, 'm')).toBe(true);
    for (const c of ['json_mode', 'embeddings', 'image_generation', 'speech', 'transcription', 'video'] as const) {
      expect(adapter.implements(c, 'm')).toBe(false);
    }
  });
});

describe('anthropic adapter: chat', () => {
  it('sends the key, the pinned version and operator headers to /v1/messages', async () => {
    await adapter.chat(makeCall());
    const sent = fake.requests[0]!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(FAKE_ANTHROPIC_API_KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers['x-team']).toBe('gateway');
    expect(sent.body).toEqual({ model: 'claude-upstream-1', max_tokens: 1024, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] });
  });

  it('sends call ids made by another provider with characters Anthropic refuses as stand-ins that still match', async () => {
    const foreignId = 'functions.get_weather:0';
    const messages = [
      { role: 'user' as const, content: 'Weather?' },
      { role: 'assistant' as const, content: null, tool_calls: [{ id: foreignId, type: 'function' as const, function: { name: 'get_weather', arguments: '{}' } }] },
      { role: 'tool' as const, tool_call_id: foreignId, content: '18C' },
    ];
    await adapter.chat(makeCall({ messages, tools: weatherTool }));
    const [, assistant, results] = fake.requests[0]!.body.messages as Array<{ content: Array<{ id?: string; tool_use_id?: string }> }>;
    const id = assistant?.content[0]?.id;
    expect(id).toMatch(/^call_[A-Za-z0-9_-]{35}$/);
    expect(results?.content[0]?.tool_use_id).toBe(id);
  });

  it('returns the completion under the model the upstream names, with usage', async () => {
    const result = await adapter.chat(makeCall());
    const { completion } = result;
    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toMatch(/^msg_01Fake/);
    expect(completion.model).toBe('claude-upstream-1');
    expect(Math.abs(completion.created - Date.now() / 1000)).toBeLessThan(5);
    expect(completion.choices[0]?.message.content).toBe(FAKE_DEFAULT_TEXT);
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    const usage = { prompt_tokens: PROMPT_TOKENS, completion_tokens: TEXT_TOKENS, total_tokens: PROMPT_TOKENS + TEXT_TOKENS, prompt_tokens_details: { cached_tokens: 8 } };
    expect(completion.usage).toEqual(usage);
    expect(result.usage).toEqual(usage);
    expect(result.rawJson).toBeUndefined();
  });

  it('maps max_tokens and stop sequences to length and stop', async () => {
    fake.behave({ kind: 'ok', text: 'one two three four five' });
    const capped = await adapter.chat(makeCall({ max_tokens: 2 }));
    expect(capped.completion.choices[0]?.message.content).toBe('one two ');
    expect(capped.completion.choices[0]?.finish_reason).toBe('length');
    const stopped = await adapter.chat(makeCall({ stop: ['three'] }));
    expect(stopped.completion.choices[0]?.message.content).toBe('one two ');
    expect(stopped.completion.choices[0]?.finish_reason).toBe('stop');
  });

  it('returns tool calls, and sends a tool round trip back in Anthropic form', async () => {
    fake.behave({ kind: 'tool_use' });
    const first = await adapter.chat(makeCall({ tools: weatherTool, tool_choice: 'required' }));
    const message = first.completion.choices[0]!.message;
    expect(first.completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(message.content).toBe(FAKE_TOOL_USE.text);
    expect(message.tool_calls).toHaveLength(1);
    const call = message.tool_calls![0]!;
    expect(call).toMatchObject({ id: FAKE_TOOL_USE.id, type: 'function', function: { name: 'get_weather' } });
    expect(JSON.parse(call.function.arguments)).toEqual(FAKE_TOOL_USE.input);
    expect(fake.requests[0]!.body.tools).toEqual([
      { name: 'get_weather', description: 'Weather by city', input_schema: { type: 'object', properties: { location: { type: 'string' } } } },
    ]);
    expect(fake.requests[0]!.body.tool_choice).toEqual({ type: 'any' });

    fake.behave({ kind: 'ok', text: 'It is 18C in Paris.' });
    const second = await adapter.chat(
      makeCall({
        tools: weatherTool,
        messages: [{ role: 'user', content: 'Weather?' }, { role: 'assistant', content: message.content, tool_calls: message.tool_calls }, { role: 'tool', tool_call_id: call.id, content: '18C' }],
      }),
    );
    expect(second.completion.choices[0]?.message.content).toBe('It is 18C in Paris.');
    expect(fake.requests[1]!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      { role: 'assistant', content: [{ type: 'text', text: FAKE_TOOL_USE.text }, { type: 'tool_use', id: FAKE_TOOL_USE.id, name: 'get_weather', input: FAKE_TOOL_USE.input }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: FAKE_TOOL_USE.id, content: '18C' }] },
    ]);
  });

  it('refuses an out-of-range temperature without calling the upstream', async () => {
    const err = await rejection(adapter.chat(makeCall({ temperature: 1.7 })));
    expect(err.code).toBe('incompatible_parameters');
    expect(err.param).toBe('temperature');
    expect(fake.requests).toHaveLength(0);
  });

  it('maps a malformed body to upstream_malformed_response', async () => {
    fake.behave({ kind: 'malformed' });
    const err = await rejection(adapter.chat(makeCall()));
    expect(err.code).toBe('upstream_malformed_response');
    expect(err.status).toBe(502);
  });
});

describe('anthropic adapter: upstream error statuses', () => {
  const cases = [
    { status: 400, errorType: 'invalid_request_error', code: 'upstream_rejected_request', gatewayStatus: 400 },
    { status: 401, errorType: 'authentication_error', code: 'upstream_auth_failed', gatewayStatus: 502 },
    { status: 403, errorType: 'permission_error', code: 'upstream_auth_failed', gatewayStatus: 502 },
    { status: 429, errorType: 'rate_limit_error', code: 'upstream_unavailable', gatewayStatus: 503, retryAfter: '7' },
    { status: 529, errorType: 'overloaded_error', code: 'upstream_unavailable', gatewayStatus: 503, retryAfter: '3' },
    { status: 500, errorType: 'api_error', code: 'upstream_error', gatewayStatus: 502 },
  ];

  for (const c of cases) {
    it(`maps ${c.status} ${c.errorType} to ${c.code} (${c.gatewayStatus}) for chat and chatStream`, async () => {
      fake.behave({ kind: 'error', status: c.status, errorType: c.errorType, message: `fake says ${c.errorType}`, retryAfter: c.retryAfter });
      for (const attempt of [adapter.chat(makeCall()), adapter.chatStream(makeCall())]) {
        const err = await rejection(attempt);
        expect(err.code).toBe(c.code);
        expect(err.status).toBe(c.gatewayStatus);
        expect(err.retryAfterSeconds).toBe(c.retryAfter === undefined ? undefined : Number(c.retryAfter));
        if (c.status === 400) expect(err.message).toContain('fake says invalid_request_error');
        expect(err.message).not.toContain(FAKE_ANTHROPIC_API_KEY);
      }
    });
  }

  it("treats the gateway's Anthropic credit running out (a 400) as the route's fault, without the billing message", async () => {
    const billing = 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.';
    fake.behave({ kind: 'error', status: 400, errorType: 'invalid_request_error', message: billing });
    for (const attempt of [adapter.chat(makeCall()), adapter.chatStream(makeCall())]) {
      const err = await rejection(attempt);
      expect(err.code).toBe('upstream_error');
      expect(err.status).toBe(502);
      expect(isRouteFault(err)).toBe(true);
      expect(err.message).not.toContain('Plans & Billing');
    }
  });

  it('reports a wrong key as upstream_auth_failed without revealing the key', async () => {
    const wrongKey = 'sk-ant-wrong-key-should-never-leak';
    const bad = createAnthropicAdapter(provider({ api_key: wrongKey }), { connectTimeoutMs: 2_000 });
    try {
      const err = await rejection(bad.chat(makeCall()));
      expect(err.code).toBe('upstream_auth_failed');
      expect(err.status).toBe(502);
      expect(err.message).not.toContain(wrongKey);
      expect(JSON.stringify({ ...err, cause: undefined })).not.toContain(wrongKey);
    } finally {
      await bad.close();
    }
  });
});

describe('anthropic adapter: chatStream', () => {
  it('streams OpenAI chunks: role first, text, finish reason, then one usage-only chunk', async () => {
    const stream = await adapter.chatStream(makeCall());
    expect(fake.requests[0]!.body.stream).toBe(true);
    const { pieces, chunks, error } = await collect(stream);
    expect(error).toBeUndefined();

    const ids = new Set(chunks.map((c) => `${c.id}|${c.created}|${c.model}|${c.object}`));
    expect(ids.size).toBe(1);
    expect(chunks[0]?.model).toBe('claude-upstream-1');
    expect(chunks[0]?.id).toMatch(/^msg_01Fake/);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });

    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(FAKE_DEFAULT_TEXT);
    expect(chunks.filter((c) => (c.choices[0]?.delta.content ?? '') !== '').length).toBe(TEXT_TOKENS);

    const finishes = chunks.map((c) => c.choices[0]?.finish_reason).filter((f) => f != null);
    expect(finishes).toEqual(['stop']);

    const usageOnly = pieces.filter((p) => p.usageOnly === true);
    expect(usageOnly).toHaveLength(1);
    expect(pieces[pieces.length - 1]).toBe(usageOnly[0]);
    const last = chunks[chunks.length - 1]!;
    const usage = { prompt_tokens: PROMPT_TOKENS, completion_tokens: TEXT_TOKENS, total_tokens: PROMPT_TOKENS + TEXT_TOKENS, prompt_tokens_details: { cached_tokens: 8 } };
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(usage);
    expect(stream.usage).toEqual(usage);
  });

  it('streams a tool call as OpenAI tool_calls deltas', async () => {
    fake.behave({ kind: 'tool_use' });
    const { chunks, error } = await collect(await adapter.chatStream(makeCall({ tools: weatherTool })));
    expect(error).toBeUndefined();
    const toolDeltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(toolDeltas[0]).toEqual({ index: 0, id: FAKE_TOOL_USE.id, type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(toolDeltas.length).toBeGreaterThan(2);
    expect(toolDeltas.every((d) => d.index === 0)).toBe(true);
    const args = toolDeltas.map((d) => d.function?.arguments ?? '').join('');
    expect(JSON.parse(args)).toEqual(FAKE_TOOL_USE.input);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(FAKE_TOOL_USE.text);
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter((f) => f != null)).toEqual(['tool_calls']);
  });

  it('throws upstream_stream_truncated when the body ends before message_stop, keeping partial usage', async () => {
    // message_start, content_block_start, ping, two text deltas
    fake.behave({ kind: 'cut_stream', afterEvents: 5 });
    const stream = await adapter.chatStream(makeCall());
    const { chunks, error, pieces } = await collect(stream);
    expect((error as GatewayError).code).toBe('upstream_stream_truncated');
    expect((error as GatewayError).status).toBe(502);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello from ');
    expect(pieces.some((p) => p.usageOnly)).toBe(false);
    expect(stream.usage).toEqual({ prompt_tokens: PROMPT_TOKENS, completion_tokens: 1, total_tokens: PROMPT_TOKENS + 1, prompt_tokens_details: { cached_tokens: 8 } });
  });

  it('throws the mapped error for an error event mid-stream', async () => {
    fake.behave({ kind: 'stream_error', afterEvents: 4 });
    const { chunks, error } = await collect(await adapter.chatStream(makeCall()));
    expect((error as GatewayError).code).toBe('upstream_unavailable');
    expect((error as GatewayError).message).toContain('Overloaded');
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello ');
  });

  it('rejects chatStream itself when the stream fails before message_start', async () => {
    fake.behave({ kind: 'stream_error', afterEvents: 0 });
    const overloaded = await rejection(adapter.chatStream(makeCall()));
    expect(overloaded.code).toBe('upstream_unavailable');
    expect(overloaded.status).toBe(503);

    fake.behave({ kind: 'cut_stream', afterEvents: 0 });
    expect((await rejection(adapter.chatStream(makeCall()))).code).toBe('upstream_stream_truncated');

    fake.behave({ kind: 'malformed' });
    expect((await rejection(adapter.chatStream(makeCall()))).code).toBe('upstream_malformed_response');
  });

  it('can be abandoned midway and the adapter keeps working', async () => {
    fake.behave({ kind: 'ok', text: 'a b c d e f g h' });
    const stream = await adapter.chatStream(makeCall());
    const seen: StreamPiece[] = [];
    for await (const batch of stream) {
      seen.push(...batch);
      if (seen.length >= 3) break;
    }
    expect(seen.length).toBeGreaterThanOrEqual(3);
    fake.behave({ kind: 'ok' });
    const { chunks, error } = await collect(await adapter.chatStream(makeCall()));
    expect(error).toBeUndefined();
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(FAKE_DEFAULT_TEXT);
  });
});

describe('anthropic adapter: cancellation', () => {
  it('stops a hanging chat when the signal aborts, with the abort reason', async () => {
    fake.behave({ kind: 'hang' });
    const controller = new Cancellation();
    const timeout = new GatewayError('upstream_timeout', 'first byte deadline passed');
    setTimeout(() => controller.abort(timeout), 50);
    const started = Date.now();
    const err = await rejection(adapter.chat(makeCall({}, controller.signal)));
    expect(err).toBe(timeout);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('stops a hanging chatStream when the caller goes away', async () => {
    fake.behave({ kind: 'hang' });
    const controller = new Cancellation();
    setTimeout(() => controller.abort(), 50);
    const err = await rejection(adapter.chatStream(makeCall({}, controller.signal)));
    expect(err.code).toBe('upstream_unreachable');
  });

  it('connects to an unreachable upstream as upstream_unreachable', async () => {
    const dead = createAnthropicAdapter(provider({ base_url: 'http://127.0.0.1:9/v1' }), { connectTimeoutMs: 1_000 });
    try {
      const err = await rejection(dead.chat(makeCall()));
      expect(err.code).toBe('upstream_unreachable');
    } finally {
      await dead.close();
    }
  });
});
