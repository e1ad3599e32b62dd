import { describe, expect, it } from 'vitest';
import { Cancellation } from '../../util/cancellation.js';
import { sseEvents } from './sse.js';

/** One read per piece, each a turn apart, as a socket delivers them. */
async function* reads(pieces: Iterable<string>): AsyncGenerator<Uint8Array> {
  for (const piece of pieces) {
    await Promise.resolve();
    yield Buffer.from(piece);
  }
}

describe('sseEvents', () => {
  it('hands over the complete events of each read', async () => {
    const batches = [];
    for await (const batch of sseEvents(reads(['event: a\ndata: 1\n\nda', 'ta: 2\n\n']), new Cancellation().signal)) batches.push(batch);
    expect(batches).toEqual([[{ event: 'a', data: '1' }], [{ event: undefined, data: '2' }]]);
  });

  it('fails an event that never ends past the cap as a malformed answer', async () => {
    function* endless(): Generator<string> {
      yield 'data: {"a":"';
      for (let i = 0; i < 40; i++) yield 'z'.repeat(1024 * 1024);
      // 40 MiB: past the 32 MiB cap.
    }
    const events = sseEvents(reads(endless()), new Cancellation().signal);
    await expect((async () => {
      for await (const _batch of events) void _batch;
    })()).rejects.toMatchObject({ code: 'upstream_malformed_response' });
  });
});
