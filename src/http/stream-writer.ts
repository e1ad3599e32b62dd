/**
 * Relays SSE frames to the raw response with backpressure: when the socket's buffer is full we
 * wait for it to drain (or for the client to go away) instead of buffering without bound.
 */
import type { ServerResponse } from 'node:http';
import type { CancelSignal } from '../util/cancellation.js';
import { SSE_CONTENT_HEADERS } from '../core/sse-frames.js';

/** How long a cancelled stream's last frames may wait for a client that is slow to read them. */
export const FLUSH_GRACE_MS = 1_000;

/**
 * Waits for the socket to take more or for the client to go away, and also stops waiting when the
 * request is cancelled (a deadline passed; once cancelled, for at most FLUSH_GRACE_MS): a client
 * that stops reading must not hold the request, and its in-flight slot, past its deadlines.
 */
function drained(res: ServerResponse, signal: CancelSignal): Promise<void> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      signal.removeListener('abort', done);
      clearTimeout(timer);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
    if (signal.aborted) timer = setTimeout(done, FLUSH_GRACE_MS);
    else signal.once('abort', done);
  });
}

export const SSE_HEADERS = {
  ...SSE_CONTENT_HEADERS,
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

/** `rest` with its first result, already read, in front (a body read ahead to its first chunk). */
export async function* startingWith<T>(first: IteratorResult<T>, rest: AsyncIterator<T>): AsyncGenerator<T> {
  try {
    for (let next = first; next.done !== true; next = await rest.next()) yield next.value;
  } finally {
    // Left early (the caller went away): the source ends too, running its own clean-up.
    await rest.return?.();
  }
}

const NEVER = (): boolean => false;

/**
 * How long the stream's last events may wait, corked, for its last frame: a commit that is slow
 * (a store in trouble retries for seconds) must not hold events the caller used to get at once.
 */
export const END_HOLD_MS = 5;

/**
 * Writes every frame; returns false if the client went away before the end (with `readToEnd`,
 * the frames are still read to their end, written nowhere). Frames written in the same
 * event-loop turn (one upstream read holds many events) are corked into one socket write instead
 * of one write each, the cork lifted at the end of the turn, not of the tick. `ending` says that
 * only the stream's last frame remains, held back until the charge's commit: the cork then stays
 * on until the response ends, so that a stream's last events, its last frame and the end of the
 * response leave in one write and one packet instead of two, unless that frame is more than
 * END_HOLD_MS late.
 */
export async function writeFrames(
  res: ServerResponse,
  frames: AsyncIterable<string | Uint8Array>,
  signal: CancelSignal,
  readToEnd = false,
  ending: () => boolean = NEVER,
): Promise<boolean> {
  let corked = false;
  let hold: NodeJS.Timeout | undefined;
  const uncork = (): void => {
    clearTimeout(hold);
    if (!corked) return;
    corked = false;
    res.uncork();
  };
  const endOfTurn = (): void => {
    if (!ending()) uncork();
    else if (corked) hold = setTimeout(uncork, END_HOLD_MS);
  };
  try {
    for await (const frame of frames) {
      if (res.destroyed) {
        // The stream is recorded for an Idempotency-Key: it runs to its end for the caller's resend.
        if (readToEnd) continue;
        return false;
      }
      if (!corked) {
        corked = true;
        res.cork();
        setImmediate(endOfTurn);
      }
      if (!res.write(frame)) {
        // A full buffer is sent now, held or not: a corked socket never drains.
        uncork();
        await drained(res, signal);
        if (signal.aborted && res.writableNeedDrain) {
          // Cancelled, and the client is not reading: nothing more can reach it.
          res.destroy();
          if (!readToEnd) return false;
        }
      }
    }
    if (res.destroyed) return false;
    // Lifts any cork still held, and sends what it held with the end of the response.
    corked = false;
    res.end();
    return true;
  } finally {
    clearTimeout(hold);
  }
}
