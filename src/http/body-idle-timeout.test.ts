import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/index.js';
import { BodyIdleTimeout } from './body-idle-timeout.js';

const MS = 80;

/** What the timeout reads of a request body being received. */
function body(): IncomingMessage & { socket: { bytesRead: number }; readableLength: number; complete: boolean } {
  return { socket: { bytesRead: 100 }, readableLength: 0, complete: false, destroyed: false } as never;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('BodyIdleTimeout', () => {
  it('aborts with a 408 once nothing arrived for the timeout', async () => {
    // Read before the timeout starts its own clock: a pause of the machine between the two (seen
    // under CI's parallel test files: 6 ms) then cannot make the wait look shorter than it was.
    const started = performance.now();
    const idle = new BodyIdleTimeout(body(), MS);
    await new Promise((resolve) => idle.once('abort', resolve));
    expect(performance.now() - started).toBeGreaterThanOrEqual(MS);
    expect(idle.reason).toBeInstanceOf(GatewayError);
    expect(idle.reason).toMatchObject({ code: 'request_body_timeout', status: 408 });
  });

  it('counts neither a body that keeps arriving nor bytes waiting for the gateway to read them', async () => {
    const raw = body();
    const idle = new BodyIdleTimeout(raw, MS);
    for (let n = 0; n < 6; n++) {
      await sleep(MS / 2);
      raw.socket.bytesRead += 10;
    }
    // The gateway is slow to read (a store slow to write): what came waits, the client is not idle.
    raw.readableLength = 16_384;
    await sleep(MS * 3);
    expect(idle.aborted).toBe(false);
    raw.readableLength = 0;
    await sleep(MS * 2);
    expect(idle.aborted).toBe(true);
  });

  it('stops once the body is complete', async () => {
    const raw = body();
    const idle = new BodyIdleTimeout(raw, MS);
    raw.complete = true;
    await sleep(MS * 3);
    expect(idle.aborted).toBe(false);
  });

  it('fails a wait for the next item and destroys a stream being read, with its error', async () => {
    const idle = new BodyIdleTimeout(body(), MS);
    async function* never(): AsyncGenerator<number> {
      yield 1;
      await new Promise(() => undefined);
    }
    const items: number[] = [];
    const reading = (async () => {
      for await (const item of idle.iterate(never())) items.push(item);
    })();
    await expect(reading).rejects.toMatchObject({ code: 'request_body_timeout' });
    expect(items).toEqual([1]);

    const stream = new PassThrough();
    const errored = new Promise((resolve) => stream.once('error', resolve));
    idle.cuts(stream);
    expect(stream.destroyed).toBe(true);
    expect(await errored).toBe(idle.reason);
  });

  it('leaves a stream alone once told to stop watching it', async () => {
    const idle = new BodyIdleTimeout(body(), MS);
    const stream = new PassThrough();
    idle.cuts(stream)();
    await new Promise((resolve) => idle.once('abort', resolve));
    expect(stream.destroyed).toBe(false);
  });
});
