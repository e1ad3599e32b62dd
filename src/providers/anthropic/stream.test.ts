import { describe, it, expect } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import type { ChatCompletionChunk } from '../../protocol/chat.js';
import type { StreamPiece } from '../types.js';
import { StreamTranslator, translateStream, type StreamEvent } from './stream.js';

const CTX = { providerId: 'anthropic-test', upstreamModel: 'public-claude', created: 1_700_000_000 };

function ev(event: string, data: Record<string, unknown>): StreamEvent {
  return { event, data: JSON.stringify({ type: event, ...data }) };
}

const START = ev('message_start', {
  message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], stop_reason: null, usage: { input_tokens: 10, cache_read_input_tokens: 5, output_tokens: 1 } },
});

function chunks(pieces: StreamPiece[]): ChatCompletionChunk[] {
  return pieces.map((p) => JSON.parse(p.data) as ChatCompletionChunk);
}

async function* from(events: StreamEvent[]): AsyncGenerator<StreamEvent> {
  for (const e of events) {
    await Promise.resolve();
    yield e;
  }
}

/** One event per read, the hardest case for batching. */
async function* batchesOf(events: AsyncIterable<StreamEvent>): AsyncGenerator<StreamEvent[]> {
  for await (const event of events) yield [event];
}

async function run(events: StreamEvent[]): Promise<{ pieces: StreamPiece[]; error: unknown; translator: StreamTranslator }> {
  const translator = new StreamTranslator(CTX);
  const pieces: StreamPiece[] = [];
  try {
    for await (const batch of translateStream(batchesOf(from(events)), translator)) pieces.push(...batch);
  } catch (error) {
    return { pieces, error, translator };
  }
  return { pieces, error: undefined, translator };
}

describe('StreamTranslator', () => {
  it('numbers tool calls among tool calls, not among content blocks', async () => {
    const { pieces, error } = await run([
      START,
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Sure.' } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_a', name: 'f', input: {} } }),
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":' } }),
      ev('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_b', name: 'g', input: {} } }),
      ev('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } }),
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '1}' } }),
      ev('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30 } }),
      ev('message_stop', {}),
    ]);
    expect(error).toBeUndefined();
    const deltas = chunks(pieces).map((c) => c.choices[0]?.delta);
    expect(deltas).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Sure.' },
      { tool_calls: [{ index: 0, id: 'toolu_a', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] },
      { tool_calls: [{ index: 1, id: 'toolu_b', type: 'function', function: { name: 'g', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '1}' } }] },
      {},
      undefined,
    ]);
    expect(chunks(pieces)[7]?.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('sends {} as the arguments of a tool called without any, when its block ends', async () => {
    const { pieces, error } = await run([
      START,
      ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_a', name: 'now', input: {} } }),
      ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '' } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_b', name: 'f', input: {} } }),
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } }),
      ev('content_block_stop', { index: 1 }),
      ev('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30 } }),
      ev('message_stop', {}),
    ]);
    expect(error).toBeUndefined();
    const args = new Map<number, string>();
    for (const chunk of chunks(pieces)) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) args.set(call.index, (args.get(call.index) ?? '') + (call.function?.arguments ?? ''));
    }
    expect([...args]).toEqual([
      [0, '{}'],
      [1, '{"a":1}'],
    ]);
  });

  it('reports usage as it arrives', () => {
    const t = new StreamTranslator(CTX);
    expect(t.usage).toBeNull();
    t.handle(START);
    expect(t.usage).toEqual({ prompt_tokens: 15, completion_tokens: 1, total_tokens: 16, prompt_tokens_details: { cached_tokens: 5 } });
    t.handle(ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 12 } }));
    expect(t.usage?.completion_tokens).toBe(12);
    expect(t.usage?.total_tokens).toBe(27);
  });

  it('ends the usage-only chunk with empty choices, marked usageOnly', async () => {
    const { pieces } = await run([START, ev('message_delta', { delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 3 } }), ev('message_stop', {})]);
    const last = pieces[pieces.length - 1]!;
    expect(last.usageOnly).toBe(true);
    expect(JSON.parse(last.data)).toEqual({
      id: 'msg_1', object: 'chat.completion.chunk', created: CTX.created, model: 'public-claude', choices: [],
      usage: { prompt_tokens: 15, completion_tokens: 3, total_tokens: 18, prompt_tokens_details: { cached_tokens: 5 } },
    });
    expect(chunks(pieces)[1]?.choices[0]?.finish_reason).toBe('length');
  });

  it('skips pings and unknown events', async () => {
    const { pieces, error } = await run([START, { event: 'ping', data: '{"type": "ping"}' }, ev('some_future_event', {}), ev('message_stop', {})]);
    expect(error).toBeUndefined();
    expect(pieces).toHaveLength(3);
  });

  it('reads past message_stop to the end, ignoring what follows, and forgives a fault there', async () => {
    let drained = false;
    async function* source(): AsyncGenerator<StreamEvent> {
      yield START;
      await Promise.resolve();
      yield ev('message_stop', {});
      yield ev('content_block_start', { index: 0, content_block: { type: 'text', text: 'late' } });
      drained = true;
      throw new GatewayError('upstream_unreachable');
    }
    const translator = new StreamTranslator(CTX);
    const pieces: StreamPiece[] = [];
    for await (const batch of translateStream(batchesOf(source()), translator)) pieces.push(...batch);
    expect(drained).toBe(true);
    expect(pieces).toHaveLength(3);
    expect(pieces[2]?.usageOnly).toBe(true);
  });

  it('throws the mapped error for an error event', async () => {
    const overloaded = await run([START, { event: 'error', data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' }]);
    expect((overloaded.error as GatewayError).code).toBe('upstream_unavailable');
    expect((overloaded.error as GatewayError).message).toContain('Overloaded');
    const limited = await run([START, { event: 'error', data: '{"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}' }]);
    expect((limited.error as GatewayError).code).toBe('upstream_unavailable');
    expect((limited.error as GatewayError).message).toContain('Slow down');
    const other = await run([START, { event: 'error', data: '{"type":"error","error":{"type":"api_error","message":"Internal"}}' }]);
    expect((other.error as GatewayError).code).toBe('upstream_error');
    expect((other.error as GatewayError).message).toContain('Internal');
  });

  it('treats an end without message_stop as truncation, keeping the usage seen', async () => {
    const { error, translator, pieces } = await run([START, ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })]);
    expect((error as GatewayError).code).toBe('upstream_stream_truncated');
    // Nothing but the role chunk came before the end: it is held, so the stream fails as a whole.
    expect(pieces).toHaveLength(0);
    expect(translator.usage?.prompt_tokens).toBe(15);
  });

  it('holds the role chunk until what follows it, so an overload right after message_start fails before anything is sent', async () => {
    const overloaded = { event: 'error', data: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) };
    const failed = await run([START, { event: 'ping', data: '{"type":"ping"}' }, overloaded]);
    expect([(failed.error as GatewayError).code, failed.pieces]).toEqual(['upstream_unavailable', []]);
    // A stream that goes on sends the role chunk in the same batch as the first text.
    const text = ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hi' } });
    async function* reads(): AsyncGenerator<StreamEvent[]> {
      await Promise.resolve();
      yield [START];
      yield [ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), text];
    }
    const first = (await translateStream(reads(), new StreamTranslator(CTX)).next()).value as StreamPiece[];
    expect(chunks(first).map((chunk) => chunk.choices[0]?.delta)).toEqual([{ role: 'assistant', content: '' }, { content: 'Hi' }]);
  });

  it('rejects malformed event data and events before message_start', async () => {
    expect(((await run([{ event: 'message_start', data: '{oops' }])).error as GatewayError).code).toBe('upstream_malformed_response');
    expect(((await run([ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })])).error as GatewayError).code).toBe(
      'upstream_malformed_response',
    );
  });
});
