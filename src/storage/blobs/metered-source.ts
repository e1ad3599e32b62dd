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

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    try {
      // A NodeJS.ReadableStream with an encoding set yields strings.
      for await (const chunk of this.source as AsyncIterable<Uint8Array | string>) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        this.bytes += bytes.length;
        if (this.bytes > this.maxBytes) throw new BlobTooLargeError(this.maxBytes);
        this.hash.update(bytes);
        yield bytes;
      }
      this.completed = true;
    } finally {
      // Leaving the loop early already calls the source iterator's return(), which destroys a
      // Readable; destroying explicitly also covers stream-likes whose iterator does not, so an
      // oversized or failed upload never keeps its socket or file open.
      this.abandon();
    }
  }
}

function destroySource(source: BlobSource): void {
  const destroy = (source as { destroy?: unknown }).destroy;
  if (typeof destroy === 'function') (destroy as () => void).call(source);
}
