/**
 * Relays SSE frames to the raw response with backpressure: when the socket's buffer is full we
 * wait for it to drain (or for the client to go away) instead of buffering without bound.
 */
import type { ServerResponse } from 'node:http';

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

/**
 * Writes every frame; returns false if the client went away before the end. Frames that arrive
 * in the same tick (one upstream read holds many events) are corked into one socket write
 * instead of one write each.
 */
export async function writeFrames(res: ServerResponse, frames: AsyncIterable<string>): Promise<boolean> {
  let corked = false;
  const uncork = (): void => {
    corked = false;
    res.uncork();
  };
  for await (const frame of frames) {
    if (res.destroyed) return false;
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(uncork);
    }
    if (!res.write(frame)) await drained(res);
  }
  if (res.destroyed) return false;
  res.end();
  return true;
}
