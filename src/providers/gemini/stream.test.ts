import { describe, it, expect } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import type { ChatCompletionChunk } from '../../protocol/chat.js';
import type { StreamPiece } from '../types.js';
import type { SseEvent } from '../upstream/sse.js';
import { StreamTranslator, translateStream } from './stream.js';
import { thoughtSignatureOf } from './tool-call-id.js';

const CTX = { providerId: 'gemini-test', apiKey: 'AIza-secret', upstreamModel: 'gemini-2.5-flash', created: 1_700_000_000 };

/** One GenerateContentResponse as an SSE event; `finish` goes on the single candidate. */
function chunk(parts: unknown[] | null, finish?: string, extra: Record<string, unknown> = {}): SseEvent {
  const candidate: Record<string, unknown> = {};
  if (parts !== null) candidate.content = { parts, role: 'model' };
  if (finish !== undefined) candidate.finishReason = finish;
  return { event: undefined, data: JSON.stringify({ candidates: [candidate], responseId: 'resp1', ...extra }) };
}

const USAGE = { usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, thoughtsTokenCount: 2, totalTokenCount: 15 } };

function chunks(pieces: StreamPiece[]): ChatCompletionChunk[] {
  return pieces.map((p) => JSON.parse(p.data) as ChatCompletionChunk);
}

/** One event per read, the hardest case for batching; `fault` is thrown after the events. */
async function* batchesOf(events: SseEvent[], fault?: Error): AsyncGenerator<SseEvent[]> {
  for (const event of events) {
    await Promise.resolve();
    yield [event];
  }
  if (fault !== undefined) throw fault;
}

async function run(events: SseEvent[], fault?: Error): Promise<{ batches: StreamPiece[][]; pieces: StreamPiece[]; error: unknown; translator: StreamTranslator }> {
  const translator = new StreamTranslator(CTX);
  const batches: StreamPiece[][] = [];
  let error: unknown;
  try {
    for await (const batch of translateStream(batchesOf(events, fault), translator)) batches.push(batch);
  } catch (err) {
    error = err;
  }
  return { batches, pieces: batches.flat(), error, translator };
}

describe('StreamTranslator', () => {
  it('ends a stream whose function call failed (MALFORMED_FUNCTION_CALL) with an upstream error, not a clean stop', async () => {
    const { pieces, error } = await run([chunk([{ text: 'Calling' }]), chunk(null, 'MALFORMED_FUNCTION_CALL', USAGE)]);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('upstream_generation_failed');
    expect(chunks(pieces).some((c) => c.choices[0]?.finish_reason != null)).toBe(false);
  });

  it('streams role, text and finish chunks, then one usage-only chunk', async () => {
    const { batches, pieces, error, translator } = await run([chunk([{ text: 'Hel' }]), chunk([{ text: 'lo' }], 'STOP', USAGE)]);
    expect(error).toBeUndefined();
    expect(batches.map((b) => b.length)).toEqual([2, 2, 1]);
    const all = chunks(pieces);
    expect(new Set(all.map((c) => `${c.id}|${c.created}|${c.model}|${c.object}`))).toEqual(new Set([`chatcmpl-resp1|${CTX.created}|gemini-2.5-flash|chat.completion.chunk`]));
    expect(all.slice(0, 4).map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason])).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'Hel' }, null],
      [{ content: 'lo' }, null],
      [{}, 'stop'],
    ]);
    const last = pieces[pieces.length - 1]!;
    expect(last.usageOnly).toBe(true);
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, completion_tokens_details: { reasoning_tokens: 2 } };
    expect(JSON.parse(last.data)).toEqual({ id: 'chatcmpl-resp1', object: 'chat.completion.chunk', created: CTX.created, model: 'gemini-2.5-flash', choices: [], usage });
    expect(translator.usage).toEqual(usage);
    expect(pieces.map((p) => p.tokens)).toEqual([0, 1, 1, 0, undefined]);
  });

  it('streams function calls as complete tool_call deltas, numbered per choice, ending in tool_calls', async () => {
    const { pieces, error } = await run([
      chunk([{ text: 'Checking.' }]),
      chunk([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: '+/+/AQ==' }, { functionCall: { name: 'now' } }], 'STOP', USAGE),
    ]);
    expect(error).toBeUndefined();
    const deltas = chunks(pieces).map((c) => c.choices[0]?.delta);
    const [first, second] = [deltas[2]!.tool_calls![0]!, deltas[3]!.tool_calls![0]!];
    expect(first).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    expect(thoughtSignatureOf(first.id!)).toBe('+/+/AQ==');
    expect(second).toMatchObject({ index: 1, type: 'function', function: { name: 'now', arguments: '{}' } });
    expect(second.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(chunks(pieces)[4]?.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('keeps several candidates apart, and ends only when each has finished', async () => {
    const two = (a: Record<string, unknown>, b: Record<string, unknown>, extra = {}): SseEvent => ({ event: undefined, data: JSON.stringify({ candidates: [a, { index: 1, ...b }], ...extra }) });
    const text = (t: string, finishReason?: string): Record<string, unknown> => ({ content: { parts: [{ text: t }] }, ...(finishReason === undefined ? {} : { finishReason }) });
    const done = await run([two(text('A'), text('B')), two(text('a', 'STOP'), text('b')), { event: undefined, data: JSON.stringify({ candidates: [{ index: 1, finishReason: 'MAX_TOKENS' }], ...USAGE }) }]);
    expect(done.error).toBeUndefined();
    const byChoice = (i: number): string => chunks(done.pieces).flatMap((c) => c.choices.filter((ch) => ch.index === i).map((ch) => ch.delta.content ?? '')).join('');
    expect([byChoice(0), byChoice(1)]).toEqual(['Aa', 'Bb']);
    expect(chunks(done.pieces).flatMap((c) => c.choices.filter((ch) => ch.finish_reason !== null).map((ch) => [ch.index, ch.finish_reason]))).toEqual([
      [0, 'stop'],
      [1, 'length'],
    ]);

    const cut = await run([two(text('A'), text('B')), two(text('a', 'STOP'), text('b'))]);
    expect((cut.error as GatewayError).code).toBe('upstream_stream_truncated');
  });

  it('ends a blocked prompt with a filtered choice', async () => {
    const { pieces, error } = await run([{ event: undefined, data: JSON.stringify({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 8 } }) }]);
    expect(error).toBeUndefined();
    expect(chunks(pieces).map((c) => c.choices[0]?.finish_reason ?? null)).toEqual([null, 'content_filter', null]);
    expect(JSON.parse(pieces[2]!.data).usage).toEqual({ prompt_tokens: 8, completion_tokens: 0, total_tokens: 8 });
  });

  it('treats a body that ends without a finish reason as truncation, keeping the usage seen', async () => {
    const { error, pieces, translator } = await run([chunk([{ text: 'Hel' }], undefined, USAGE)]);
    expect((error as GatewayError).code).toBe('upstream_stream_truncated');
    expect(chunks(pieces).map((c) => c.choices[0]?.delta.content)).toEqual(['', 'Hel']);
    expect(pieces.some((p) => p.usageOnly === true)).toBe(false);
    expect(translator.usage?.prompt_tokens).toBe(10);
    expect(((await run([])).error as GatewayError).code).toBe('upstream_stream_truncated');
  });

  it('keeps count-less metadata from erasing the usage seen, and takes later counts', async () => {
    const { translator } = await run([chunk([{ text: 'a' }], undefined, USAGE), chunk([{ text: 'b' }], undefined, { usageMetadata: { trafficType: 'ON_DEMAND' } })]);
    expect(translator.usage?.completion_tokens).toBe(5);
  });

  it('ignores what a finished choice sends, reads on for usage, and forgives a fault after the end', async () => {
    const late = { usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 9, totalTokenCount: 19 } };
    const { pieces, error, translator } = await run([chunk([{ text: 'done' }], 'STOP'), chunk([{ text: 'late' }], undefined, late)], new GatewayError('upstream_unreachable'));
    expect(error).toBeUndefined();
    expect(chunks(pieces).map((c) => c.choices[0]?.delta.content ?? null)).toEqual(['', 'done', null, null]);
    expect(translator.usage?.completion_tokens).toBe(9);
    expect(pieces[pieces.length - 1]?.usageOnly).toBe(true);
  });

  it('throws the mapped error for an error event, after what came before it', async () => {
    const overloaded = await run([chunk([{ text: 'Hi' }]), { event: undefined, data: '{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}' }]);
    expect((overloaded.error as GatewayError).code).toBe('upstream_unavailable');
    expect((overloaded.error as GatewayError).message).toContain('The model is overloaded.');
    expect(overloaded.pieces).toHaveLength(2);
    const other = await run([{ event: undefined, data: '{"error":{"code":500,"message":"Internal error","status":"INTERNAL"}}' }]);
    expect((other.error as GatewayError).code).toBe('upstream_error');
  });

  it('skips empty and [DONE] events, and rejects malformed ones', async () => {
    const { error } = await run([{ event: undefined, data: '' }, chunk([{ text: 'x' }], 'STOP'), { event: undefined, data: '[DONE]' }]);
    expect(error).toBeUndefined();
    for (const data of ['{oops', '[]', '{"candidates":{}}', '{"candidates":[1]}', '{"candidates":[{"content":{"parts":[{"functionCall":{}}]}}]}', '{"candidates":[{},{"index":0}]}']) {
      expect(((await run([{ event: undefined, data }])).error as GatewayError).code).toBe('upstream_malformed_response');
    }
  });
});
