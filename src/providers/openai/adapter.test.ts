import { listenLocal } from '../../../test/support/local-server.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_DEFAULT_REPLY, FAKE_OPENAI_KEY, startFakeOpenAI, type FakeOpenAI } from '../../../test/fakes/openai-server.js';
import type { ProviderConfig } from '../../config/schema.js';
import { GatewayError } from '../../errors/index.js';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../protocol/chat.js';
import type { ChatCall, ProviderAdapter, StreamBatch, StreamPiece } from '../types.js';
import { createOpenAIAdapter } from './adapter.js';
import { MAX_STREAM_EVENT_CHARS } from '../upstream/event-size.js';
import { Cancellation, type CancelSignal } from '../../util/cancellation.js';

const UPSTREAM_MODEL = 'gpt-4o-mini-2024-07-18';
const MESSAGES = [{ role: 'user' as const, content: 'Say hello' }];
/** The fake's token rule: 3 + 3 per message + words of content. */
const PROMPT_TOKENS = 8;
const REPLY_WORDS = FAKE_DEFAULT_REPLY.split(' ');

function providerConfig(baseUrl: string, overrides: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    id: 'openai-main',
    kind: 'openai',
    base_url: baseUrl,
    api_key: FAKE_OPENAI_KEY,
    headers: {},
    max_connections: 4,
    anthropic_version: '2023-06-01',
    output_cap_field: 'max_completion_tokens',
    ...overrides,
  };
}

function chatCall(request: Partial<ChatCompletionRequest> = {}, signal: CancelSignal = new Cancellation().signal): ChatCall {
  return {
    request: { model: 'public-model', messages: MESSAGES, ...request },
    upstreamModel: UPSTREAM_MODEL,
    signal,
    requestId: 'req-test',
    defaultMaxTokens: 1024,
  };
}

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a GatewayError, got success');
}

async function collect(stream: AsyncIterable<readonly StreamPiece[]>, into: StreamPiece[] = []): Promise<StreamPiece[]> {
  for await (const batch of stream) into.push(...batch);
  return into;
}

/** Iterates until the stream fails; returns the pieces seen before and the error. */
async function collectUntilFailure(stream: AsyncIterable<readonly StreamPiece[]>): Promise<{ pieces: StreamPiece[]; error: GatewayError }> {
  const pieces: StreamPiece[] = [];
  const error = await failure(collect(stream, pieces));
  return { pieces, error };
}

function chunks(pieces: StreamPiece[]): ChatCompletionChunk[] {
  return pieces.map((p) => JSON.parse(p.data) as ChatCompletionChunk);
}

/** A bare HTTP server for wire details the fake does not produce (exact bytes, odd framing). */
async function rawServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res));
  });
  const local = await listenLocal(server);
  return { url: `${local.origin}/v1`, connections: () => local.connections(), close: () => local.close() };
}

/** An event stream sent `size` bytes a write, each in a turn of its own, so that reads split it anywhere. */
function dribblingStream(wire: Buffer, size: number): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  return rawServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let at = 0;
    const timer = setInterval(() => {
      if (at >= wire.length) {
        clearInterval(timer);
        res.end();
        return;
      }
      res.write(wire.subarray(at, at + size));
      at += size;
    }, 0);
  });
}

/** Streams from `server` (closed after): one chunk relayed, then upstream_error with the message "late failure". */
async function expectOneChunkThenLateFailure(server: { url: string; close: () => Promise<void> }): Promise<void> {
  const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
  try {
    const { pieces, error } = await collectUntilFailure(await raw.chatStream(chatCall({ stream: true })));
    expect(pieces).toHaveLength(1);
    expect(error.code).toBe('upstream_error');
    expect(error.message).toContain('late failure');
  } finally {
    await raw.close();
    await server.close();
  }
}

let fake: FakeOpenAI;
let adapter: ProviderAdapter;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  adapter = createOpenAIAdapter(providerConfig(fake.url, { headers: { 'OpenAI-Organization': 'org-tollgate' } }), { connectTimeoutMs: 2_000 });
});

afterAll(async () => {
  await adapter.close();
  await fake.close();
});

afterEach(() => {
  fake.behave({ kind: 'ok' });
  fake.requests.length = 0;
});

describe('OpenAI adapter: identity', () => {
  it('reports its provider id and kind and implements every capability', () => {
    expect(adapter.id).toBe('openai-main');
    expect(adapter.kind).toBe('openai');
    expect(adapter.implements('chat', UPSTREAM_MODEL)).toBe(true);
    expect(adapter.implements('vision', UPSTREAM_MODEL)).toBe(true);
    expect(adapter.implements('embeddings', UPSTREAM_MODEL)).toBe(true);
  });
});

describe('OpenAI adapter: non-streaming', () => {
  it('returns the completion, its usage and the upstream body as received', async () => {
    const result = await adapter.chat(chatCall());
    expect(result.completion.object).toBe('chat.completion');
    expect(result.completion.id).toMatch(/^chatcmpl-/);
    expect(result.completion.model).toBe(UPSTREAM_MODEL);
    expect(result.completion.choices).toHaveLength(1);
    expect(result.completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: FAKE_DEFAULT_REPLY });
    expect(result.completion.choices[0]?.finish_reason).toBe('stop');
    expect(result.usage).toMatchObject({ prompt_tokens: PROMPT_TOKENS, completion_tokens: REPLY_WORDS.length, total_tokens: PROMPT_TOKENS + REPLY_WORDS.length });
    expect(result.rawJson).toBe(JSON.stringify(result.completion));
  });

  it('relays the body byte for byte, whitespace and key order included', async () => {
    const body = '{ "model" : "served-by-vllm",\n  "choices": [ {"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop","logprobs":null} ],\n  "object":"chat.completion","id":"x","created":1,\n  "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4} }';
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
    try {
      const result = await raw.chat(chatCall());
      expect(result.rawJson).toBe(body);
      expect(result.completion.model).toBe('served-by-vllm');
      expect(result.usage).toEqual({ prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 });
    } finally {
      await raw.close();
      await server.close();
    }
  });

  it('replaces only the model and passes every other field through, unknown ones included', async () => {
    const request = {
      temperature: 0.2,
      max_tokens: 3,
      n: 2,
      metadata: { team: 'search' },
      reasoning_effort: 'low',
      some_future_parameter: { nested: [1, 'two', null] },
    };
    const result = await adapter.chat(chatCall(request));
    expect(fake.requests).toHaveLength(1);
    const sent = fake.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toEqual({ model: UPSTREAM_MODEL, messages: MESSAGES, ...request });
    expect(sent.headers.authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`);
    expect(sent.headers['openai-organization']).toBe('org-tollgate');
    expect(sent.headers['content-type']).toBe('application/json');
    // The fake honours max_tokens and n, so the reply proves they arrived.
    expect(result.completion.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, 'Hello! How can ', 'length'],
      [1, 'Hello! How can ', 'length'],
    ]);
    expect(result.usage?.completion_tokens).toBe(6);
  });

  it('sends the output cap also when the caller sent the field as null', async () => {
    await adapter.chat(chatCall({ max_completion_tokens: null }));
    expect(fake.requests[0]?.body.max_completion_tokens).toBe(chatCall().defaultMaxTokens);
  });

  it("sends the model's output cap when the caller gives none, in the configured field", async () => {
    await adapter.chat(chatCall());
    expect(fake.requests[0]?.body.max_completion_tokens).toBe(chatCall().defaultMaxTokens);
    expect(fake.requests[0]?.body.max_tokens).toBeUndefined();
    const legacy = createOpenAIAdapter(providerConfig(fake.url, { output_cap_field: 'max_tokens' }), { connectTimeoutMs: 1000 });
    try {
      const stream = await legacy.chatStream(chatCall({ stream: true }));
      for await (const batch of stream) void batch;
      expect(fake.requests[1]?.body.max_tokens).toBe(chatCall().defaultMaxTokens);
      expect(fake.requests[1]?.body.max_completion_tokens).toBeUndefined();
    } finally {
      await legacy.close();
    }
  });

  it('returns tool calls', async () => {
    fake.behave({ kind: 'tool_call' });
    const tools = [{ type: 'function' as const, function: { name: 'lookup_weather', parameters: { type: 'object' } } }];
    const result = await adapter.chat(chatCall({ tools, tool_choice: 'required' }));
    const choice = result.completion.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    expect(choice.message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'lookup_weather', arguments: '{"location":"Paris, France","unit":"celsius"}' } });
    expect(choice.message.tool_calls?.[0]?.id).toMatch(/^call_/);
    expect(fake.requests[0]?.body.tools).toEqual(tools);
  });

  it('sends a conversation begun on Gemini, whose call ids OpenAI would refuse as too long, with stand-ins that still match', async () => {
    const geminiId = `call_${'a'.repeat(24)}_ts_${'S'.repeat(400)}`;
    const messages = [
      { role: 'user' as const, content: 'Weather?' },
      { role: 'assistant' as const, content: null, tool_calls: [{ id: geminiId, type: 'function' as const, function: { name: 'get_weather', arguments: '{}' } }] },
      { role: 'tool' as const, tool_call_id: geminiId, content: '18C' },
    ];
    await adapter.chat(chatCall({ messages }));
    await collect(await adapter.chatStream(chatCall({ messages, stream: true })));
    for (const sent of fake.requests) {
      const [, call, result] = sent.body.messages as Array<{ tool_calls?: Array<{ id: string }>; tool_call_id?: string }>;
      expect(call?.tool_calls?.[0]?.id).toHaveLength(40);
      expect(result?.tool_call_id).toBe(call?.tool_calls?.[0]?.id);
    }
    expect(fake.requests).toHaveLength(2);
  });

  it('does not send an authorization header when the provider has no key', async () => {
    const keyless = createOpenAIAdapter(providerConfig(fake.url, { api_key: undefined }), { connectTimeoutMs: 2_000 });
    try {
      const error = await failure(keyless.chat(chatCall()));
      expect(error.code).toBe('upstream_auth_failed');
      expect(fake.requests[0]?.headers.authorization).toBeUndefined();
    } finally {
      await keyless.close();
    }
  });
});

describe('OpenAI adapter: streaming', () => {
  it('relays chunks unchanged, forces usage and flags the usage-only chunk', async () => {
    const stream = await adapter.chatStream(chatCall({ stream: true }));
    const pieces = await collect(stream);
    const sent = fake.requests[0]!;
    expect(sent.body.stream).toBe(true);
    expect(sent.body.stream_options).toEqual({ include_usage: true });
    expect(sent.body.model).toBe(UPSTREAM_MODEL);

    // role chunk + one chunk per word + finish chunk + usage chunk
    expect(pieces).toHaveLength(REPLY_WORDS.length + 3);
    const parsed = chunks(pieces);
    expect(parsed[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(parsed.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(FAKE_DEFAULT_REPLY);
    expect(parsed.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(pieces.slice(0, -1).every((p) => p.usageOnly === undefined && p.data.includes('"usage":null'))).toBe(true);
    // The upstream's own text: re-serialising the parse gives the same string only if untouched.
    expect(pieces.every((p) => p.data === JSON.stringify(JSON.parse(p.data)))).toBe(true);
    expect(new Set(parsed.map((c) => c.id)).size).toBe(1);

    const last = pieces.at(-1)!;
    expect(last.usageOnly).toBe(true);
    expect(parsed.at(-1)?.choices).toEqual([]);
    const usage = { prompt_tokens: PROMPT_TOKENS, completion_tokens: REPLY_WORDS.length, total_tokens: PROMPT_TOKENS + REPLY_WORDS.length };
    expect(parsed.at(-1)?.usage).toMatchObject(usage);
    expect(stream.usage).toMatchObject(usage);
  });

  it("keeps the caller's other stream options and overrides include_usage: false", async () => {
    await collect(await adapter.chatStream(chatCall({ stream: true, stream_options: { include_usage: false, include_obfuscation: false } as never })));
    expect(fake.requests[0]?.body.stream_options).toEqual({ include_usage: true, include_obfuscation: false });
  });

  it('streams tool calls', async () => {
    fake.behave({ kind: 'tool_call' });
    const tools = [{ type: 'function' as const, function: { name: 'lookup_weather' } }];
    const stream = await adapter.chatStream(chatCall({ stream: true, tools }));
    const parsed = chunks(await collect(stream));
    const deltas = parsed.flatMap((c) => c.choices.flatMap((choice) => choice.delta.tool_calls ?? []));
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'lookup_weather', arguments: '' } });
    expect(deltas.map((d) => d.function?.arguments ?? '').join('')).toBe('{"location":"Paris, France","unit":"celsius"}');
    expect(parsed.flatMap((c) => c.choices.map((choice) => choice.finish_reason)).filter(Boolean)).toEqual(['tool_calls']);
    expect(stream.usage?.completion_tokens).toBe(18);
  });

  it('handles CRLF framing, comments, chunks split anywhere, vLLM-style usage and a final [DONE] without blank line', async () => {
    const role = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"é"},"finish_reason":null}]}';
    const content = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"日本 \\"usage\\": {x}"},"finish_reason":"stop"}]}';
    const usageChunk = '{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": null, "usage": {"prompt_tokens": 5, "completion_tokens": 2}}';
    const wire = Buffer.from(`: ping\r\n\r\ndata: ${role}\r\n\r\ndata:${content}\r\n\r\ndata: ${usageChunk}\r\n\r\ndata: [DONE]`);
    // Seven-byte writes split CRLF pairs and multi-byte characters.
    const server = await dribblingStream(wire, 7);
    const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
    try {
      const stream = await raw.chatStream(chatCall({ stream: true }));
      const pieces = await collect(stream);
      // The usage-only chunk goes out with OpenAI's empty choices, which clients iterate, instead of vLLM's null.
      const usageOnly = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}';
      expect(pieces).toEqual([{ data: role }, { data: content }, { data: usageOnly, usageOnly: true }]);
      expect(stream.usage).toEqual({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    } finally {
      await raw.close();
      await server.close();
    }
  });

  it('fails a stream whose event never ends past the cap as malformed, without holding the rest', async () => {
    const piece = 'x'.repeat(1024 * 1024);
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"a":"');
      let sent = 0;
      const timer = setInterval(() => {
        // Past the cap, unless the gateway hangs up first (it should, after about 32 pieces).
        if (sent++ === 48 || res.destroyed) {
          clearInterval(timer);
          res.end();
          return;
        }
        res.write(piece);
      }, 0);
    });
    const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
    try {
      const stream = await raw.chatStream(chatCall({ stream: true }));
      const { pieces, error } = await collectUntilFailure(stream);
      expect(pieces).toEqual([]);
      expect(error.code).toBe('upstream_malformed_response');
      expect(error.message).toContain(`longer than ${MAX_STREAM_EVENT_CHARS} characters`);
    } finally {
      await raw.close();
      await server.close();
    }
  });

  it('relays an event sent on several data lines as one line of the same JSON', async () => {
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",\n' +
          'data: "choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}],\n' +
          'data: "usage":{"prompt_tokens":3,"completion_tokens":1}}\n\ndata: [DONE]\n\n',
      );
    });
    const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
    try {
      const stream = await raw.chatStream(chatCall({ stream: true }));
      const pieces = await collect(stream);
      expect(pieces).toHaveLength(1);
      const data = pieces[0]?.data ?? '';
      expect(data).not.toContain('\n');
      expect(JSON.parse(data)).toMatchObject({ choices: [{ delta: { content: 'hi' } }] });
      expect(stream.usage).toEqual({ prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 });
    } finally {
      await raw.close();
      await server.close();
    }
  });

  it('gives the connection back to the pool after [DONE] even if the body ends later', async () => {
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\n');
      setTimeout(() => res.end(), 30);
    });
    const raw = createOpenAIAdapter(providerConfig(server.url, { max_connections: 1 }), { connectTimeoutMs: 2_000 });
    try {
      for (let i = 0; i < 3; i++) expect(await collect(await raw.chatStream(chatCall({ stream: true })))).toHaveLength(1);
      expect(server.connections()).toBe(1);
    } finally {
      await raw.close();
      await server.close();
    }
  });

  it('lets the caller stop early without breaking later requests', async () => {
    const stream = await adapter.chatStream(chatCall({ stream: true }));
    for await (const batch of stream) {
      expect(batch[0]?.data).toContain('"role":"assistant"');
      break;
    }
    const result = await adapter.chat(chatCall());
    expect(result.completion.choices[0]?.message.content).toBe(FAKE_DEFAULT_REPLY);
  });

  describe('the bytes read, where they already are the frames', () => {
    const event = (content: string, finish = 'null'): string => `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":${finish}}],"usage":null}`;
    const usageOnly = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3}}';
    const frame = (data: string): string => `data: ${data}\n\n`;

    /** Streams `wire` in `size`-byte writes and checks, for every batch, that its bytes are its first pieces' frames. */
    async function batchesOf(wire: string, size: number): Promise<StreamBatch[]> {
      const server = size === 0
        ? await rawServer((_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(wire);
        })
        : await dribblingStream(Buffer.from(wire), size);
      const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
      try {
        const batches: StreamBatch[] = [];
        for await (const batch of await raw.chatStream(chatCall({ stream: true }))) {
          batches.push(batch);
          if (batch.wire === undefined) continue;
          expect(batch.wire.pieces).toBeGreaterThan(0);
          expect(batch.wire.pieces).toBeLessThanOrEqual(batch.length);
          expect(Buffer.from(batch.wire.bytes).toString('utf8')).toBe(batch.slice(0, batch.wire.pieces).map((p) => frame(p.data)).join(''));
          expect(batch.slice(0, batch.wire.pieces).some((p) => p.usageOnly === true)).toBe(false);
        }
        return batches;
      } finally {
        await raw.close();
        await server.close();
      }
    }

    it('gives the bytes of a read of whole events, up to the usage-only chunk and [DONE]', async () => {
      const wire = [event('a'), event(' b'), event('', '"stop"'), usageOnly].map(frame).join('') + 'data: [DONE]\n\n';
      const [batch, ...rest] = await batchesOf(wire, 0);
      expect(rest).toEqual([]);
      expect(batch).toHaveLength(4);
      expect(batch!.wire?.pieces).toBe(3);
      expect(Buffer.from(batch!.wire!.bytes).toString()).toBe([event('a'), event(' b'), event('', '"stop"')].map(frame).join(''));
    });

    it('gives a read of whole events that is not ASCII as it came, and none for a read that also ends the stream', async () => {
      const wire = [event('日本'), event(' é')].map(frame).join('');
      const server = await rawServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(wire);
        setTimeout(() => res.end(`${frame(event('ü', '"stop"'))}data: [DONE]\n\n`), 20);
      });
      const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
      try {
        const batches: StreamBatch[] = [];
        for await (const batch of await raw.chatStream(chatCall({ stream: true }))) batches.push(batch);
        expect(batches).toHaveLength(2);
        expect(Buffer.from(batches[0]!.wire!.bytes).toString()).toBe(wire);
        expect(batches[0]!.wire!.pieces).toBe(2);
        expect(batches[1]!.wire).toBeUndefined();
        expect(batches[1]!.map((p) => p.data)).toEqual([event('ü', '"stop"')]);
      } finally {
        await raw.close();
        await server.close();
      }
    });

    it('gives none for events it relays changed', async () => {
      const joined = 'data: {"id":"c1","choices":[{"index":0,\ndata: "delta":{"content":"x"}}]}\n\n';
      for (const wire of [`data:${event('a')}\n\n`, `data:  ${event('a')}\n\n`, `data: ${event('a')}\r\n\r\n`, joined, `data: \n\n${frame(event('a'))}`]) {
        const batches = await batchesOf(`${wire}data: [DONE]\n\n`, 0);
        expect(batches.every((b) => b.wire === undefined)).toBe(true);
      }
    });

    it('keeps the bytes and the frames the same however the stream is split', async () => {
      const events = [event('a'), event('b'), event('ü'), event('c'), event('', '"stop"'), usageOnly];
      const whole = frame(event('a')).length;
      let given = 0;
      for (const head of ['', ': ping\n\n']) {
        const wire = `${head}${events.map(frame).join('')}data: [DONE]\n\n`;
        for (const size of [1, 5, 64, whole, 2 * whole, 400]) {
          const batches = await batchesOf(wire, size);
          given += batches.filter((b) => b.wire !== undefined).length;
          expect(batches.flat().map((p) => p.data)).toEqual(events);
        }
      }
      expect(given).toBeGreaterThan(0);
    });
  });

  it('refuses to be iterated twice', async () => {
    const stream = await adapter.chatStream(chatCall({ stream: true }));
    await collect(stream);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(GatewayError);
  });
});

describe('OpenAI adapter: upstream errors', () => {
  const cases = [
    { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'messages[0].content', expected: { code: 'upstream_rejected_request', status: 400 } },
    { status: 500, type: 'server_error', code: null, param: null, expected: { code: 'upstream_error', status: 502 } },
  ] as const;

  for (const mode of ['chat', 'chatStream'] as const) {
    for (const c of cases) {
      it(`${mode}: upstream ${c.status} becomes ${c.expected.code} ${c.expected.status}`, async () => {
        fake.behave({ kind: 'error', status: c.status, type: c.type, code: c.code, param: c.param, message: 'Invalid content: too many cats.' });
        const error = await failure(mode === 'chat' ? adapter.chat(chatCall()) : adapter.chatStream(chatCall({ stream: true })));
        expect(error.code).toBe(c.expected.code);
        expect(error.status).toBe(c.expected.status);
        if (c.status === 400) {
          expect(error.param).toBe('messages[0].content');
          expect(error.message).toContain('Invalid content: too many cats.');
        }
      });
    }
  }

  it('upstream 401 becomes upstream_auth_failed 502 without the key in the message', async () => {
    const wrongKey = 'sk-wrong-key-for-the-test-1234567890';
    const wrong = createOpenAIAdapter(providerConfig(fake.url, { api_key: wrongKey }), { connectTimeoutMs: 2_000 });
    try {
      for (const error of [await failure(wrong.chat(chatCall())), await failure(wrong.chatStream(chatCall({ stream: true })))]) {
        expect(error.code).toBe('upstream_auth_failed');
        expect(error.status).toBe(502);
        expect(error.message).toContain('openai-main');
        expect(error.message).not.toContain(wrongKey);
        expect(error.message).not.toContain('7890');
      }
    } finally {
      await wrong.close();
    }
  });

  it('scrubs the key from an upstream message that echoes it', async () => {
    fake.behave({ kind: 'error', status: 400, type: 'invalid_request_error', code: null, message: `Bad request from key ${FAKE_OPENAI_KEY} today` });
    const error = await failure(adapter.chat(chatCall()));
    expect(error.message).toContain('Bad request from key [redacted] today');
    expect(error.message).not.toContain(FAKE_OPENAI_KEY);
  });

  for (const [status, retryAfter] of [[429, '7'], [503, '2']] as const) {
    it(`upstream ${status} becomes upstream_unavailable 503 with Retry-After`, async () => {
      fake.behave({ kind: 'error', status, type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached.', retryAfter });
      for (const error of [await failure(adapter.chat(chatCall())), await failure(adapter.chatStream(chatCall({ stream: true })))]) {
        expect(error.code).toBe('upstream_unavailable');
        expect(error.status).toBe(503);
        expect(error.retryAfterSeconds).toBe(Number(retryAfter));
      }
    });
  }

  it('a body that is not JSON is upstream_malformed_response 502', async () => {
    fake.behave({ kind: 'malformed' });
    const error = await failure(adapter.chat(chatCall()));
    expect(error.code).toBe('upstream_malformed_response');
    expect(error.status).toBe(502);
  });

  it('a JSON body without choices, or whose choices are not of the chat shape, is upstream_malformed_response', async () => {
    for (const body of [
      '{"id":"x","object":"chat.completion"}',
      '{"choices":[{"index":0,"finish_reason":"stop","text":"legacy"}]}',
      '{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function"}]}}]}',
    ]) {
      const server = await rawServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      });
      const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
      try {
        expect((await failure(raw.chat(chatCall()))).code).toBe('upstream_malformed_response');
      } finally {
        await raw.close();
        await server.close();
      }
    }
  });

  it('an error body under a 200 status is upstream_error with its message', async () => {
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"model overloaded","type":"server_error","param":null,"code":null}}');
    });
    const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
    try {
      const error = await failure(raw.chat(chatCall()));
      expect(error.code).toBe('upstream_error');
      expect(error.message).toContain('model overloaded');
    } finally {
      await raw.close();
      await server.close();
    }
  });

  it('a stream event that is not JSON is upstream_malformed_response', async () => {
    fake.behave({ kind: 'malformed' });
    const { pieces, error } = await collectUntilFailure(await adapter.chatStream(chatCall({ stream: true })));
    expect(pieces).toEqual([]);
    expect(error.code).toBe('upstream_malformed_response');
    expect(error.status).toBe(502);
  });

  it('a stream event cut short is upstream_malformed_response after what came before it, not relayed', async () => {
    const chunk = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}';
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${chunk}\n\ndata: ${chunk} \n\ndata: {"id":"c","object":"chat.completion.chunk","choi\n\ndata: [DONE]\n\n`);
    });
    const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
    try {
      const { pieces, error } = await collectUntilFailure(await raw.chatStream(chatCall({ stream: true })));
      expect(pieces.map((p) => p.data)).toEqual([chunk, `${chunk} `]);
      expect(error.code).toBe('upstream_malformed_response');
    } finally {
      await raw.close();
      await server.close();
    }
  });

  it('a 2xx that is not an event stream fails chatStream with upstream_malformed_response', async () => {
    fake.behave({ kind: 'not_json_content_type' });
    const error = await failure(adapter.chatStream(chatCall({ stream: true })));
    expect(error.code).toBe('upstream_malformed_response');
    expect(error.status).toBe(502);
    expect(error.message).toContain('text/html');
  });

  it('a stream that ends without [DONE] is upstream_stream_truncated after the chunks sent', async () => {
    fake.behave({ kind: 'cut_stream', afterChunks: 3 });
    const { pieces, error } = await collectUntilFailure(await adapter.chatStream(chatCall({ stream: true })));
    expect(pieces).toHaveLength(4);
    expect(chunks(pieces).map((c) => c.choices[0]?.delta.content).join('')).toBe(REPLY_WORDS.slice(0, 3).map((w) => `${w} `).join(''));
    expect(error.code).toBe('upstream_stream_truncated');
    expect(error.status).toBe(502);
  });

  it('a connection dropped mid-stream is upstream_stream_truncated', async () => {
    const server = await rawServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n');
      setTimeout(() => req.socket.destroy(), 20);
    });
    const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
    try {
      const { pieces, error } = await collectUntilFailure(await raw.chatStream(chatCall({ stream: true })));
      expect(pieces).toHaveLength(1);
      expect(error.code).toBe('upstream_stream_truncated');
    } finally {
      await raw.close();
      await server.close();
    }
  });

  it('an error frame mid-stream is upstream_error with the upstream message', async () => {
    fake.behave({ kind: 'stream_error', afterChunks: 2 });
    const { pieces, error } = await collectUntilFailure(await adapter.chatStream(chatCall({ stream: true })));
    expect(pieces).toHaveLength(3);
    expect(error.code).toBe('upstream_error');
    expect(error.status).toBe(502);
    expect(error.message).toContain('The server had an error while processing your request');
  });

  for (const [shape, frame] of [
    ['a later top-level "error" key', '{"id":"c1", "error": {"message":"late failure","type":"server_error"}}'],
    ["older vLLM's top-level error object", '{"object":"error","message":"late failure","type":"BadRequestError","param":null,"code":400}'],
  ] as const) {
    it(`an error frame with ${shape} is upstream_error`, async () => {
      const server = await rawServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`data: {"choices":[{"index":0,"delta":{"content":"error"},"finish_reason":"error"}]}\n\ndata: ${frame}\n\n`);
      });
      // The first chunk only mentions "error" as values: it is relayed, not mistaken for a failure.
      await expectOneChunkThenLateFailure(server);
    });
  }

  // Reads are searched for the word once each, not each event: the word split between two reads,
  // or in an event begun several reads before it ends, must still be found.
  for (const size of [1, 2, 3, 4, 5, 6]) {
    it(`an error frame arriving ${size} byte${size === 1 ? '' : 's'} a read is still upstream_error`, async () => {
      const wire = Buffer.from('data: {"id":"c1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}],"usage":null}\n\ndata: {"id":"c1", "error": {"message":"late failure","type":"server_error"}}\n\n');
      await expectOneChunkThenLateFailure(await dribblingStream(wire, size));
    });
  }

  it('an `event: error` frame is upstream_error too', async () => {
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('event: error\ndata: {"message":"worker crashed","object":"error"}\n\n');
    });
    const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
    try {
      const { error } = await collectUntilFailure(await raw.chatStream(chatCall({ stream: true })));
      expect(error.code).toBe('upstream_error');
      expect(error.message).toContain('worker crashed');
    } finally {
      await raw.close();
      await server.close();
    }
  });
});

describe('OpenAI adapter: transport', () => {
  it('a closed port is upstream_unreachable', async () => {
    const server = await rawServer(() => undefined);
    const url = server.url;
    await server.close();
    const dead = createOpenAIAdapter(providerConfig(url), { connectTimeoutMs: 2_000 });
    try {
      for (const error of [await failure(dead.chat(chatCall())), await failure(dead.chatStream(chatCall({ stream: true })))]) {
        expect(error.code).toBe('upstream_unreachable');
        expect(error.status).toBe(502);
      }
    } finally {
      await dead.close();
    }
  });

  it('aborting the signal while waiting ends the call with the abort reason', async () => {
    fake.behave({ kind: 'hang' });
    const controller = new Cancellation();
    const reason = new GatewayError('upstream_timeout', 'first byte deadline passed');
    setTimeout(() => controller.abort(reason), 50);
    const started = Date.now();
    const error = await failure(adapter.chat(chatCall({}, controller.signal)));
    expect(error).toBe(reason);
    expect(Date.now() - started).toBeLessThan(2_000);

    const streamController = new Cancellation();
    setTimeout(() => streamController.abort(), 50);
    const streamError = await failure(adapter.chatStream(chatCall({ stream: true }, streamController.signal)));
    expect(streamError.code).toBe('upstream_unreachable');
    expect(streamError.message).toContain('cancelled');
  });

  it('aborting the signal mid-stream ends iteration with the abort reason', async () => {
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n');
    });
    const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
    try {
      const controller = new Cancellation();
      const stream = await raw.chatStream(chatCall({ stream: true }, controller.signal));
      const reason = new GatewayError('upstream_timeout', 'idle deadline passed');
      setTimeout(() => controller.abort(reason), 50);
      const { pieces, error } = await collectUntilFailure(stream);
      expect(pieces).toHaveLength(1);
      expect(error).toBe(reason);
    } finally {
      await raw.close();
      await server.close();
    }
  });
});
