import { describe, expect, it } from 'vitest';
import { OpenAIChatStream } from './stream.js';
import { Cancellation } from '../../util/cancellation.js';
import type { StreamedAnswer } from '../upstream/dispatched-call.js';
import type { StreamBatch } from '../types.js';

/** An upstream body that hands out the given reads, one per `next`. */
function answer(reads: string[]): StreamedAnswer {
  const chunks = reads.map((r) => Buffer.from(r));
  const body = {
    [Symbol.asyncIterator]() {
      return this;
    },
    next: () => Promise.resolve(chunks.length > 0 ? { value: chunks.shift() as Buffer, done: false } : { value: undefined, done: true }),
    return: () => Promise.resolve({ value: undefined, done: true }),
    discard: () => undefined,
    destroy: () => undefined,
  };
  return { status: 200, headers: {}, body } as unknown as StreamedAnswer;
}

const chunk = (content: string): string => `data: {"choices":[{"index":0,"delta":{"content":"${content}"}}]}\n\n`;
const contents = (batch: StreamBatch): string[] => batch.map((p) => (JSON.parse(p.data) as { choices: Array<{ delta: { content: string } }> }).choices[0]!.delta.content);

describe('OpenAIChatStream: streams read in turn', () => {
  it('relays each stream its own events and bytes when the reads of two streams alternate', async () => {
    const context = { providerId: 'p', apiKey: undefined, signal: new Cancellation() };
    const a = new OpenAIChatStream(answer([chunk('a1') + chunk('a2') + 'data: {"choices":[{"index":0,"delta":{"content":"a3"}}]}', `\n\n${chunk('a4')}data: [DONE]\n\n`]), context)[Symbol.asyncIterator]();
    const b = new OpenAIChatStream(answer([chunk('b1'), chunk('b2') + chunk('b3') + chunk('b4') + chunk('b5'), 'data: [DONE]\n\n']), context)[Symbol.asyncIterator]();
    const first = (await a.next()).value as StreamBatch;
    const second = (await b.next()).value as StreamBatch;
    const third = (await b.next()).value as StreamBatch;
    const fourth = (await a.next()).value as StreamBatch;
    expect([contents(first), contents(second), contents(third), contents(fourth)]).toEqual([['a1', 'a2'], ['b1'], ['b2', 'b3', 'b4', 'b5'], ['a3', 'a4']]);
    expect(Buffer.from(first.wire!.bytes).toString()).toBe(chunk('a1') + chunk('a2'));
    expect(Buffer.from(third.wire!.bytes).toString()).toBe(chunk('b2') + chunk('b3') + chunk('b4') + chunk('b5'));
    expect((await a.next()).done).toBe(true);
    expect((await b.next()).done).toBe(true);
  });
});
