/**
 * Reads a put's source chunk by chunk, counting and hashing as the bytes go by. Counting happens
 * per chunk, before the chunk is handed on, so the limit is enforced while streaming: the chunk
 * that crosses it is never written, and nothing after it is read.
 */
import { createHash } from 'node:crypto';
import { BlobTooLargeError, type BlobSource } from './types.js';

export class MeteredSource implements AsyncIterable<Buffer> {
  private bytes = 0;
  private completed = false;
  private readonly hash = createHash('sha256');
  private cutReason: Error | undefined;
  /** Fails the wait for the source's next chunk, while there is one. */
  private interrupt: ((reason: Error) => void) | undefined;

  constructor(
    private readonly source: BlobSource,
    private readonly maxBytes: number,
  ) {
    // NaN would make every comparison false, i.e. no limit at all.
    if (!(maxBytes >= 0)) throw new RangeError(`maxBytes must be a non-negative number, not ${maxBytes}`);
  }

  get size(): number {
    return this.bytes;
  }

  /** Hex SHA-256 of everything read; call once, after the iteration completed. */
  sha256(): string {
    return this.hash.digest('hex');
  }

  /**
   * Destroys the source unless it was read to the end. For failures outside the iteration (no
   * connection, no directory), which would otherwise leave an upload's socket open and unread.
   */
  abandon(): void {
    if (!this.completed) destroySource(this.source);
  }

  /**
   * Fails the reading of a source not read to its end yet with `reason`, at once, even while it
   * waits for a chunk that may never come (a generator cannot be destroyed), and destroys the
   * source: for a store that stops waiting for its puts (its close).
   */
  cut(reason: Error): void {
    if (this.completed || this.cutReason !== undefined) return;
    this.cutReason = reason;
    this.interrupt?.(reason);
    destroySource(this.source);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    // A NodeJS.ReadableStream with an encoding set yields strings.
    const chunks = (this.source as AsyncIterable<Uint8Array | string>)[Symbol.asyncIterator]();
    let waiting = false;
    try {
      for (;;) {
        waiting = true;
        const next = await this.next(chunks);
        waiting = false;
        if (next.done === true) break;
        const chunk = next.value;
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        this.bytes += bytes.length;
        if (this.bytes > this.maxBytes) throw new BlobTooLargeError(this.maxBytes);
        this.hash.update(bytes);
        yield bytes;
      }
      this.completed = true;
    } finally {
      // Left early (over the limit, or the reader stopped): the source's return() is called, as a
      // for-await loop would, which destroys a Readable and runs a generator's own cleanup; not
      // after a failed or cut wait for a chunk, where it is done already or would queue behind it.
      if (!this.completed && !waiting) await chunks.return?.();
      // Destroying explicitly also covers stream-likes whose iterator does not, so an oversized or
      // failed upload never keeps its socket or file open.
      this.abandon();
    }
  }

  /**
   * The source's next chunk, unless the put is cut first. A wait of its own each time: racing every
   * chunk against one promise that stays pending would keep every chunk reachable from it.
   */
  private next(chunks: AsyncIterator<Uint8Array | string>): Promise<IteratorResult<Uint8Array | string>> {
    if (this.cutReason !== undefined) return Promise.reject(this.cutReason);
    return new Promise((resolve, reject) => {
      this.interrupt = reject;
      chunks.next().then(
        (result) => {
          this.interrupt = undefined;
          resolve(result);
        },
        (err: Error) => {
          this.interrupt = undefined;
          reject(err);
        },
      );
    });
  }
}

function destroySource(source: BlobSource): void {
  const destroy = (source as { destroy?: unknown }).destroy;
  if (typeof destroy === 'function') (destroy as () => void).call(source);
}
