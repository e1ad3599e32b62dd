/**
 * The puts a blob store has under way, for its close. A graceful shutdown must not cut a put that
 * is about to finish (the store closed under it, its upload lost), so close waits for each put to
 * end or fail. Not for ever: a put still receiving its bytes once `graceMs` has passed has its
 * source cut, and fails keeping nothing, as a put whose source failed does. By then the gateway's
 * drain has closed the uploads' connections and the video poller has stopped its downloads, so
 * such a source is one that would never end. A put asked for once close has begun is refused.
 */
import type { MeteredSource } from './metered-source.js';
import { blobStoreClosed } from './store-closed.js';

/** How long close waits for puts still receiving their bytes before it cuts them. */
export const CLOSE_GRACE_MS = 5_000;

export class PutsInFlight {
  private readonly running = new Map<Promise<unknown>, MeteredSource | undefined>();
  private closed = false;

  /**
   * Runs and tracks `put`, which reads `meter` (none: bytes already in memory); once close has
   * begun, rejects at once instead, destroying the source.
   */
  run<T>(put: () => Promise<T>, meter?: MeteredSource): Promise<T> {
    if (this.closed) {
      // Refused before a byte is read: an upload's connection is not left open and unread.
      meter?.abandon();
      return Promise.reject(blobStoreClosed());
    }
    const running = put();
    this.running.set(running, meter);
    const forget = (): void => void this.running.delete(running);
    running.then(forget, forget);
    return running;
  }

  /** Refuses new puts, then resolves once every put under way has ended or failed. */
  async close(graceMs = CLOSE_GRACE_MS): Promise<void> {
    this.closed = true;
    if (this.running.size === 0) return;
    const settled = Promise.allSettled(this.running.keys());
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace over'>((resolve) => (timer = setTimeout(resolve, graceMs, 'grace over')));
    const first = await Promise.race([settled, graceOver]);
    clearTimeout(timer);
    if (first !== 'grace over') return;
    // A put already writing what it received (its source read to the end) is not cut: it ends.
    for (const meter of this.running.values()) meter?.cut(blobStoreClosed());
    await settled;
  }
}
