/**
 * The idle timeout of a multipart body being received (`server.body_idle_timeout_ms`). Node's request
 * timeout is off, since a large upload on a slow link may rightly take long; without this, a client
 * that sent its headers and then nothing, or stopped halfway through its file, held its connection,
 * an in-flight slot and its upload's temporary file for as long as it kept the connection open.
 *
 * Only the client's silence counts, as with an upstream's streams: while bytes it sent are waiting
 * for the gateway to read them (the blob store slow to write), the client is not idle. Arrival is
 * read from the socket's byte count a few times per timeout, not from the body's 'data' events,
 * since listening for those would start the body flowing before its reader (the multipart parser)
 * is attached; so the timeout ends a body a quarter of it (at most a second) late at worst.
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { GatewayError } from '../errors/index.js';
import { Cancellation } from '../util/cancellation.js';

const MAX_CHECK_EVERY_MS = 1_000;

/** Aborted, with the 408 to answer, once the body has sent nothing for the timeout. */
export class BodyIdleTimeout extends Cancellation {
  private readonly timer: NodeJS.Timeout;
  private bytesRead: number;
  private quietSince = performance.now();

  constructor(
    private readonly raw: IncomingMessage,
    private readonly timeoutMs: number,
  ) {
    super();
    this.bytesRead = raw.socket?.bytesRead ?? 0;
    this.timer = setInterval(() => this.check(), Math.max(1, Math.min(MAX_CHECK_EVERY_MS, Math.floor(timeoutMs / 4))));
    this.timer.unref();
  }

  /** The items of `source`, each waited for under the timeout. */
  async *iterate<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
    const iterator = source[Symbol.asyncIterator]();
    let finished = false;
    try {
      for (;;) {
        const next = await this.next(iterator);
        if (next.done === true) {
          finished = true;
          return;
        }
        yield next.value;
      }
    } finally {
      // Left early, as a for-await loop would be: the source is ended. Not after a timeout: its
      // next() still waits for bytes that will not come, and a return() would queue behind it.
      if (!finished && !this.aborted) await iterator.return?.();
    }
  }

  /**
   * Destroys `stream` with the timeout's error if the body goes silent while the stream is read,
   * so that its reader (a blob store's put) fails and keeps nothing. Returns the call that stops.
   */
  cuts(stream: Readable): () => void {
    const cut = (): void => void stream.destroy(this.error);
    if (this.aborted) {
      cut();
      return () => undefined;
    }
    this.once('abort', cut);
    return () => void this.removeListener('abort', cut);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The 408 the body's silence is answered with (once aborted). */
  private get error(): GatewayError {
    return this.reason as GatewayError;
  }

  /**
   * The iterator's next item, unless the body goes silent first. Each wait has a listener of its
   * own, removed after: racing every item against one promise that stays pending would keep every
   * item reachable from it.
   */
  private next<T>(iterator: AsyncIterator<T>): Promise<IteratorResult<T>> {
    if (this.aborted) return Promise.reject(this.error);
    return new Promise((resolve, reject) => {
      const silent = (): void => reject(this.error);
      this.once('abort', silent);
      iterator.next().then(
        (result) => {
          this.removeListener('abort', silent);
          resolve(result);
        },
        (err: Error) => {
          this.removeListener('abort', silent);
          reject(err);
        },
      );
    });
  }

  private check(): void {
    const raw = this.raw;
    if (raw.complete || raw.destroyed) return this.stop();
    const bytesRead = raw.socket?.bytesRead ?? this.bytesRead;
    // Bytes came, or bytes are waiting unread: the wait, if any, is the gateway's.
    if (bytesRead !== this.bytesRead || raw.readableLength > 0) {
      this.bytesRead = bytesRead;
      this.quietSince = performance.now();
      return;
    }
    if (performance.now() - this.quietSince < this.timeoutMs) return;
    this.stop();
    this.abort(new GatewayError('request_body_timeout', `No byte of the request body arrived for ${this.timeoutMs} ms; nothing of it was kept.`));
  }
}
