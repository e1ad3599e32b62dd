import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import type { ProviderConfig } from '../../config/schema.js';
import { GatewayError } from '../../errors/index.js';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../protocol/chat.js';
import type { EmbeddingsRequest } from '../../protocol/embeddings.js';
import { Cancellation } from '../../util/cancellation.js';
import type { ChatCall, ChatStream, EmbeddingsCall, ProviderAdapter, StreamPiece } from '../types.js';
import {
  FAKE_DEFAULT_TEXT,
  FAKE_FUNCTION_CALL,
  FAKE_GEMINI_API_KEY,
  FAKE_USAGE,
  SKIP_SIGNATURE,
  fakeEmbedding,
  startFakeGemini,
  type FakeGemini,
} from '../../../test/fakes/gemini-server.js';
import { DEFAULT_GEMINI_BASE_URL, createGeminiAdapter } from './adapter.js';
import { thoughtSignatureOf } from './tool-call-id.js';

/** The config schema gains the "gemini" kind when the adapter is wired in; until then the literal is cast. */
/** The default text is six words, and the fake counts a word as a token; thinking tokens count as completion. */
const TEXT_TOKENS = 6;
const USAGE = {
  prompt_tokens: FAKE_USAGE.promptTokenCount,
  completion_tokens: TEXT_TOKENS + FAKE_USAGE.thoughtsTokenCount,
  total_tokens: FAKE_USAGE.promptTokenCount + TEXT_TOKENS + FAKE_USAGE.thoughtsTokenCount,
  prompt_tokens_details: { cached_tokens: FAKE_USAGE.cachedContentTokenCount },
  completion_tokens_details: { reasoning_tokens: FAKE_USAGE.thoughtsTokenCount },
};

let fake: FakeGemini;
let adapter: ProviderAdapter;

function provider(overrides: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    id: 'gemini-test',
    kind: 'gemini',
    base_url: fake.url,
    api_key: FAKE_GEMINI_API_KEY,
    headers: { 'X-Team': 'gateway' },
    max_connections: 4,
    anthropic_version: '2023-06-01',
    output_cap_field: 'max_completion_tokens',
    ...overrides,
  };
}

function makeCall(request: Partial<ChatCompletionRequest> = {}, signal = new Cancellation().signal, upstreamModel = 'gemini-2.5-flash'): ChatCall {
  return {
    request: { model: 'public-gemini', messages: [{ role: 'user', content: 'Hi' }], ...request },
    upstreamModel,
    signal,
    requestId: 'req_test_1',
    defaultMaxTokens: 1024,
  };
}

function embedCall(request: Partial<EmbeddingsRequest> = {}, signal = new Cancellation().signal): EmbeddingsCall {
  return { request: { model: 'public-embed', input: 'hello', ...request }, upstreamModel: 'gemini-embedding-001', signal, requestId: 'req_test_2' };
}

function embeddings(call: EmbeddingsCall): ReturnType<NonNullable<ProviderAdapter['embeddings']>> {
  if (adapter.embeddings === undefined) throw new Error('the adapter has no embeddings');
  return adapter.embeddings(call);
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

function text(chunks: ChatCompletionChunk[], choice = 0): string {
  return chunks.flatMap((c) => c.choices.filter((ch) => ch.index === choice).map((ch) => ch.delta.content ?? '')).join('');
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
  fake = await startFakeGemini();
  adapter = createGeminiAdapter(provider(), { connectTimeoutMs: 2_000 });
});

afterAll(async () => {
  await adapter.close();
  await fake.close();
});

beforeEach(() => {
  fake.behave({ kind: 'ok' });
  fake.requests.length = 0;
});

describe('gemini adapter: identity', () => {
  it('implements chat, streaming, tools, vision, json_mode and embeddings only', () => {
    expect(adapter.id).toBe('gemini-test');
    expect(adapter.kind).toBe('gemini');
    for (const c of ['chat', 'streaming', 'tools', 'vision', 'json_mode', 'embeddings'] as const) expect(adapter.implements(c, 'm')).toBe(true);
    for (const c of ['image_generation', 'speech', 'transcription', 'video'] as const) expect(adapter.implements(c, 'm')).toBe(false);
    expect(typeof adapter.embeddings).toBe('function');
  });

  it('defaults to the public v1beta endpoint', () => {
    expect(DEFAULT_GEMINI_BASE_URL).toBe('https://generativelanguage.googleapis.com/v1beta');
  });
});

describe('gemini adapter: chat', () => {
  it('sends the key in x-goog-api-key (never the URL) and operator headers to :generateContent', async () => {
    await adapter.chat(makeCall({ messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] }));
    const sent = fake.requests[0]!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe(FAKE_GEMINI_API_KEY);
    expect(sent.headers['x-team']).toBe('gateway');
    expect(sent.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { maxOutputTokens: 1024 },
    });
  });

  it('returns a chat.completion under the upstream model, with usage counting thinking as completion', async () => {
    const result = await adapter.chat(makeCall());
    const { completion } = result;
    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toMatch(/^chatcmpl-fakeResp/);
    expect(completion.model).toBe('gemini-2.5-flash');
    expect(Math.abs(completion.created - Date.now() / 1000)).toBeLessThan(5);
    expect(completion.choices).toEqual([{ index: 0, message: { role: 'assistant', content: FAKE_DEFAULT_TEXT, refusal: null }, finish_reason: 'stop', logprobs: null }]);
    expect(completion.usage).toEqual(USAGE);
    expect(result.usage).toEqual(USAGE);
    expect(result.rawJson).toBeUndefined();
  });

  it('gives every completion its own id', async () => {
    const [a, b] = await Promise.all([adapter.chat(makeCall()), adapter.chat(makeCall())]);
    expect(a.completion.id).not.toBe(b.completion.id);
  });

  it('maps an output cap and stop sequences to length and stop, and n to several choices', async () => {
    fake.behave({ kind: 'ok', text: 'one two three four five' });
    const capped = await adapter.chat(makeCall({ max_tokens: 2 }));
    expect(capped.completion.choices[0]?.message.content).toBe('one two ');
    expect(capped.completion.choices[0]?.finish_reason).toBe('length');
    const stopped = await adapter.chat(makeCall({ stop: ['three'] }));
    expect(stopped.completion.choices[0]?.message.content).toBe('one two ');
    expect(stopped.completion.choices[0]?.finish_reason).toBe('stop');
    const two = await adapter.chat(makeCall({ n: 2 }));
    expect(two.completion.choices.map((c) => [c.index, c.message.content])).toEqual([
      [0, 'one two three four five'],
      [1, 'one two three four five (variant 1)'],
    ]);
  });

  it('asks for JSON with the caller schema', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    await adapter.chat(makeCall({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema, strict: true } } }));
    expect(fake.requests[0]!.body.generationConfig).toEqual({ maxOutputTokens: 1024, responseMimeType: 'application/json', responseJsonSchema: schema });
  });

  it('sends data: URL images inline and refuses http(s) ones with 422 without calling the upstream', async () => {
    const image = (url: string): Partial<ChatCompletionRequest> => ({ messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url } }] }] });
    await adapter.chat(makeCall(image('data:image/png;base64,iVBORw0KGgo=')));
    expect(fake.requests[0]!.body.contents[0].parts[1]).toEqual({ inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } });
    const err = await rejection(adapter.chat(makeCall(image('https://example.com/cat.png'))));
    expect(err.code).toBe('incompatible_parameters');
    expect(err.status).toBe(422);
    expect(err.param).toBe('messages[0].content[1].image_url.url');
    expect(fake.requests).toHaveLength(1);
  });

  it('refuses logprobs with 422 without calling the upstream', async () => {
    const err = await rejection(adapter.chat(makeCall({ logprobs: true })));
    expect(err.code).toBe('incompatible_parameters');
    expect(err.param).toBe('logprobs');
    expect(fake.requests).toHaveLength(0);
  });

  it('returns tool calls and sends a Gemini 3 tool round trip back with its thought signature', async () => {
    fake.behave({ kind: 'tool_call' });
    const model = 'gemini-3-pro-preview';
    const first = await adapter.chat(makeCall({ tools: weatherTool, tool_choice: 'required' }, undefined, model));
    expect(fake.requests[0]!.body.tools).toEqual([
      { functionDeclarations: [{ name: 'get_weather', description: 'Weather by city', parametersJsonSchema: { type: 'object', properties: { location: { type: 'string' } } } }] },
    ]);
    expect(fake.requests[0]!.body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    const message = first.completion.choices[0]!.message;
    expect(first.completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(message.content).toBeNull();
    const call = message.tool_calls![0]!;
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(call.id).toMatch(/^call_/);
    expect(JSON.parse(call.function.arguments)).toEqual(FAKE_FUNCTION_CALL.args);

    fake.behave({ kind: 'ok', text: 'It is 18C in Paris.' });
    const second = await adapter.chat(
      makeCall(
        { tools: weatherTool, messages: [{ role: 'user', content: 'Weather?' }, { role: 'assistant', content: null, tool_calls: message.tool_calls }, { role: 'tool', tool_call_id: call.id, content: '18C' }] },
        undefined,
        model,
      ),
    );
    expect(second.completion.choices[0]?.message.content).toBe('It is 18C in Paris.');
    expect(fake.requests[1]!.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: FAKE_FUNCTION_CALL.args }, thoughtSignature: FAKE_FUNCTION_CALL.thoughtSignature }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '18C' } } }] },
    ]);
  });

  it('lets Gemini 3 continue a tool conversation another provider started', async () => {
    const result = await adapter.chat(
      makeCall(
        {
          tools: weatherTool,
          messages: [
            { role: 'user', content: 'Weather?' },
            { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_01Other', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Rome"}' } }] },
            { role: 'tool', tool_call_id: 'toolu_01Other', content: '24C' },
          ],
        },
        undefined,
        'gemini-3-flash-preview',
      ),
    );
    expect(result.completion.choices[0]?.message.content).toBe(FAKE_DEFAULT_TEXT);
    expect(fake.requests[0]!.body.contents[1].parts[0].thoughtSignature).toBe(SKIP_SIGNATURE);
  });

  it('answers a blocked prompt and a filtered candidate with content_filter', async () => {
    fake.behave({ kind: 'blocked' });
    const blocked = await adapter.chat(makeCall());
    expect(blocked.completion.choices).toEqual([{ index: 0, message: { role: 'assistant', content: null, refusal: null }, finish_reason: 'content_filter', logprobs: null }]);
    expect(blocked.usage?.prompt_tokens).toBe(FAKE_USAGE.promptTokenCount);
    fake.behave({ kind: 'ok', finishReason: 'SAFETY' });
    const filtered = await adapter.chat(makeCall());
    expect(filtered.completion.choices[0]).toMatchObject({ message: { content: null }, finish_reason: 'content_filter' });
  });

  it('addresses a model given as a resource name', async () => {
    await adapter.chat(makeCall({}, undefined, 'models/gemini-2.0-flash'));
    expect(fake.requests[0]!.path).toBe('/v1beta/models/gemini-2.0-flash:generateContent');
  });

  it('maps a malformed body to upstream_malformed_response', async () => {
    fake.behave({ kind: 'malformed' });
    const err = await rejection(adapter.chat(makeCall()));
    expect(err.code).toBe('upstream_malformed_response');
    expect(err.status).toBe(502);
  });
});

describe('gemini adapter: upstream error statuses', () => {
  const cases = [
    { status: 400, grpc: 'INVALID_ARGUMENT', code: 'upstream_rejected_request', gatewayStatus: 400 },
    { status: 400, grpc: 'FAILED_PRECONDITION', code: 'upstream_error', gatewayStatus: 502 },
    { status: 403, grpc: 'PERMISSION_DENIED', code: 'upstream_auth_failed', gatewayStatus: 502 },
    { status: 404, grpc: 'NOT_FOUND', code: 'upstream_error', gatewayStatus: 502 },
    { status: 429, grpc: 'RESOURCE_EXHAUSTED', code: 'upstream_unavailable', gatewayStatus: 503, retryAfter: '7' },
    { status: 429, grpc: 'RESOURCE_EXHAUSTED', code: 'upstream_unavailable', gatewayStatus: 503, retryDelay: '21s', expectedRetry: 21 },
    { status: 500, grpc: 'INTERNAL', code: 'upstream_error', gatewayStatus: 502 },
    { status: 503, grpc: 'UNAVAILABLE', code: 'upstream_unavailable', gatewayStatus: 503, retryAfter: '3' },
    { status: 504, grpc: 'DEADLINE_EXCEEDED', code: 'upstream_timeout', gatewayStatus: 504 },
  ];

  for (const c of cases) {
    const wait = c.retryAfter !== undefined ? `Retry-After ${c.retryAfter}` : c.retryDelay !== undefined ? `RetryInfo ${c.retryDelay}` : 'no wait';
    it(`maps ${c.status} ${c.grpc} (${wait}) to ${c.code} (${c.gatewayStatus}) for chat, chatStream and embeddings`, async () => {
      fake.behave({ kind: 'error', status: c.status, grpcStatus: c.grpc, message: `fake says ${c.grpc}`, retryAfter: c.retryAfter, retryDelay: c.retryDelay, echoKey: true });
      for (const attempt of [adapter.chat(makeCall()), adapter.chatStream(makeCall()), embeddings(embedCall())]) {
        const err = await rejection(attempt);
        expect(err.code).toBe(c.code);
        expect(err.status).toBe(c.gatewayStatus);
        expect(err.retryAfterSeconds).toBe(c.expectedRetry ?? (c.retryAfter === undefined ? undefined : Number(c.retryAfter)));
        if (c.code === 'upstream_rejected_request' || c.grpc === 'FAILED_PRECONDITION') {
          expect(err.message).toContain(`fake says ${c.grpc}`);
          // The fake echoes the key it received, as Google does in some error details.
          expect(err.message).toContain('[redacted]');
        }
        expect(err.message).not.toContain(FAKE_GEMINI_API_KEY);
      }
    });
  }

  it('reports a wrong key (Gemini 400 API_KEY_INVALID) as upstream_auth_failed without revealing the key', async () => {
    const wrongKey = 'AIzaSy-wrong-key-should-never-leak';
    const bad = createGeminiAdapter(provider({ api_key: wrongKey }), { connectTimeoutMs: 2_000 });
    try {
      for (const attempt of [bad.chat(makeCall()), bad.chatStream(makeCall()), bad.embeddings!(embedCall())]) {
        const err = await rejection(attempt);
        expect(err.code).toBe('upstream_auth_failed');
        expect(err.status).toBe(502);
        expect(err.message).not.toContain(wrongKey);
        expect(JSON.stringify({ ...err, cause: undefined })).not.toContain(wrongKey);
      }
    } finally {
      await bad.close();
    }
  });

  it('reports a missing key (Gemini 403) as upstream_auth_failed', async () => {
    const keyless = createGeminiAdapter(provider({ api_key: undefined }), { connectTimeoutMs: 2_000 });
    try {
      expect((await rejection(keyless.chat(makeCall()))).code).toBe('upstream_auth_failed');
      expect(fake.requests[0]!.headers['x-goog-api-key']).toBeUndefined();
    } finally {
      await keyless.close();
    }
  });
});

describe('gemini adapter: chatStream', () => {
  it('streams OpenAI chunks: role first, text, finish reason, then one usage-only chunk', async () => {
    const stream = await adapter.chatStream(makeCall());
    expect(fake.requests[0]!.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    const { pieces, chunks, error } = await collect(stream);
    expect(error).toBeUndefined();

    expect(new Set(chunks.map((c) => `${c.id}|${c.created}|${c.model}|${c.object}`)).size).toBe(1);
    expect(chunks[0]?.id).toMatch(/^chatcmpl-fakeResp/);
    expect(chunks[0]?.model).toBe('gemini-2.5-flash');
    expect(chunks[0]?.object).toBe('chat.completion.chunk');
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });

    expect(text(chunks)).toBe(FAKE_DEFAULT_TEXT);
    expect(chunks.filter((c) => (c.choices[0]?.delta.content ?? '') !== '').length).toBe(TEXT_TOKENS);
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter((f) => f != null)).toEqual(['stop']);

    const usageOnly = pieces.filter((p) => p.usageOnly === true);
    expect(usageOnly).toHaveLength(1);
    expect(pieces[pieces.length - 1]).toBe(usageOnly[0]);
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(USAGE);
    expect(stream.usage).toEqual(USAGE);
  });

  it('streams tool calls as complete tool_call deltas with index', async () => {
    fake.behave({ kind: 'tool_call', calls: 2, text: 'Checking both.' });
    const { chunks, error } = await collect(await adapter.chatStream(makeCall({ tools: weatherTool })));
    expect(error).toBeUndefined();
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas.map((d) => d.index)).toEqual([0, 1]);
    for (const d of deltas) {
      expect(d).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
      expect(JSON.parse(d.function!.arguments!)).toEqual(FAKE_FUNCTION_CALL.args);
    }
    expect(thoughtSignatureOf(deltas[0]!.id!)).toBe(FAKE_FUNCTION_CALL.thoughtSignature);
    expect(deltas[1]!.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(text(chunks)).toBe('Checking both.');
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter((f) => f != null)).toEqual(['tool_calls']);
  });

  it('streams several choices apart', async () => {
    const { chunks, error } = await collect(await adapter.chatStream(makeCall({ n: 2 })));
    expect(error).toBeUndefined();
    expect(text(chunks, 0)).toBe(FAKE_DEFAULT_TEXT);
    expect(text(chunks, 1)).toBe(`${FAKE_DEFAULT_TEXT} (variant 1)`);
    expect(chunks.flatMap((c) => c.choices.filter((ch) => ch.finish_reason !== null).map((ch) => ch.index))).toEqual([0, 1]);
  });

  it('throws upstream_stream_truncated when the body ends without a finish reason, keeping partial usage', async () => {
    fake.behave({ kind: 'cut_stream', afterChunks: 2 });
    const stream = await adapter.chatStream(makeCall());
    const { chunks, error, pieces } = await collect(stream);
    expect((error as GatewayError).code).toBe('upstream_stream_truncated');
    expect((error as GatewayError).status).toBe(502);
    expect(text(chunks)).toBe('Hello from ');
    expect(pieces.some((p) => p.usageOnly)).toBe(false);
    expect(stream.usage?.prompt_tokens).toBe(FAKE_USAGE.promptTokenCount);
    expect(stream.usage?.completion_tokens).toBe(2 + FAKE_USAGE.thoughtsTokenCount);
  });

  it('throws the mapped error for an error event mid-stream', async () => {
    fake.behave({ kind: 'stream_error', afterChunks: 1 });
    const { chunks, error } = await collect(await adapter.chatStream(makeCall()));
    expect((error as GatewayError).code).toBe('upstream_unavailable');
    expect((error as GatewayError).message).toContain('overloaded');
    expect(text(chunks)).toBe('Hello ');
  });

  it('rejects chatStream itself when the stream fails before its first chunk', async () => {
    fake.behave({ kind: 'stream_error', afterChunks: 0 });
    const overloaded = await rejection(adapter.chatStream(makeCall()));
    expect(overloaded.code).toBe('upstream_unavailable');
    expect(overloaded.status).toBe(503);

    fake.behave({ kind: 'cut_stream', afterChunks: 0 });
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
    expect(text(chunks)).toBe(FAKE_DEFAULT_TEXT);
  });
});

describe('gemini adapter: embeddings', () => {
  it('embeds one input with :embedContent, giving no token count', async () => {
    const result = await embeddings(embedCall());
    const sent = fake.requests[0]!;
    expect(sent.path).toBe('/v1beta/models/gemini-embedding-001:embedContent');
    expect(sent.headers['x-goog-api-key']).toBe(FAKE_GEMINI_API_KEY);
    expect(sent.body).toEqual({ content: { parts: [{ text: 'hello' }] } });
    expect(result).toEqual({ vectors: [fakeEmbedding('hello')], promptTokens: null });
    expect('rawJson' in result).toBe(false);
  });

  it('embeds several inputs with :batchEmbedContents and dimensions', async () => {
    const result = await embeddings(embedCall({ input: ['alpha', 'beta', 'gamma'], dimensions: 4 }));
    expect(fake.requests[0]!.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(fake.requests[0]!.body.requests[0]).toEqual({ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'alpha' }] }, outputDimensionality: 4 });
    expect(result.vectors).toEqual(['alpha', 'beta', 'gamma'].map((t) => fakeEmbedding(t, 4)));
    expect(result.promptTokens).toBeNull();
  });

  it('splits more than 100 inputs into batches the upstream accepts, keeping input order', async () => {
    const inputs = Array.from({ length: 250 }, (_, i) => `text ${i}`);
    const result = await embeddings(embedCall({ input: inputs }));
    expect(fake.requests.map((r): unknown => r.body.requests.length as unknown)).toEqual([100, 100, 50]);
    expect(result.vectors).toEqual(inputs.map((t) => fakeEmbedding(t)));
  });

  it('refuses token-array input with 422 without calling the upstream', async () => {
    const err = await rejection(embeddings(embedCall({ input: [[1, 2, 3]] })));
    expect(err.code).toBe('incompatible_parameters');
    expect(err.param).toBe('input');
    expect(fake.requests).toHaveLength(0);
  });

  it('maps a malformed answer to upstream_malformed_response', async () => {
    fake.behave({ kind: 'malformed' });
    expect((await rejection(embeddings(embedCall({ input: ['a', 'b'] })))).code).toBe('upstream_malformed_response');
  });
});

describe('gemini adapter: cancellation', () => {
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

  it('stops a hanging chatStream or embeddings call when the caller goes away', async () => {
    fake.behave({ kind: 'hang' });
    const streaming = new Cancellation();
    setTimeout(() => streaming.abort(), 50);
    expect((await rejection(adapter.chatStream(makeCall({}, streaming.signal)))).code).toBe('upstream_unreachable');
    const embedding = new Cancellation();
    setTimeout(() => embedding.abort(), 50);
    expect((await rejection(embeddings(embedCall({}, embedding.signal)))).code).toBe('upstream_unreachable');
  });

  it('connects to an unreachable upstream as upstream_unreachable', async () => {
    const dead = createGeminiAdapter(provider({ base_url: 'http://127.0.0.1:9/v1beta' }), { connectTimeoutMs: 1_000 });
    try {
      expect((await rejection(dead.chat(makeCall()))).code).toBe('upstream_unreachable');
    } finally {
      await dead.close();
    }
  });
});
