/**
 * Micro-benchmark of the streamed relay (issue 3): one OpenAI-compatible stream through the
 * adapter's relay (decode, SSE scan, the checks on each event, the batches handed on), without
 * sockets. The body is the benchmark's own streamed answer (20 content chunks, a finish chunk, a
 * usage chunk and [DONE]), in one read as the matrix's upstream sends it, and cut into reads of
 * 512 bytes, where events span reads. Run with `npm run bench:relay`.
 */
import { bench, describe } from 'vitest';
import { OpenAIChatStream } from '../src/providers/openai/stream.js';
import { Cancellation } from '../src/util/cancellation.js';
import type { StreamedAnswer } from '../src/providers/upstream/dispatched-call.js';
import { streamBody } from './servers/mock-answers.js';

const BODY = Buffer.from(streamBody(true));
const context = { providerId: 'bench', apiKey: undefined, signal: new Cancellation() };

/** An upstream body handing out `reads`, fresh copies each time as a socket's reads are. */
function answer(reads: readonly Buffer[]): StreamedAnswer {
  let next = 0;
  const body = {
    [Symbol.asyncIterator]() {
      return this;
    },
    next: () => Promise.resolve(next < reads.length ? { value: Buffer.from(reads[next++] as Buffer), done: false } : { value: undefined, done: true }),
    return: () => Promise.resolve({ value: undefined, done: true }),
    discard: () => undefined,
    destroy: () => undefined,
  };
  return { status: 200, headers: {}, body } as unknown as StreamedAnswer;
}

async function relay(reads: readonly Buffer[]): Promise<void> {
  const stream = new OpenAIChatStream(answer(reads), context);
  let pieces = 0;
  for await (const batch of stream) pieces += batch.length;
  if (pieces === 0 || stream.usage === null) throw new Error('the relay lost the stream');
}

const inOneRead = [BODY];
const in512ByteReads = Array.from({ length: Math.ceil(BODY.length / 512) }, (_, i) => BODY.subarray(i * 512, (i + 1) * 512));

describe('the OpenAI relay, one stream of the benchmark', () => {
  bench('the body in one read', () => relay(inOneRead));
  bench('the body in reads of 512 bytes', () => relay(in512ByteReads));
});
