/**
 * A keep-alive connection pool to one upstream origin. Timeouts are not set here: the pipeline
 * owns every deadline (first byte, idle, total budget) and aborts the call's signal instead, so
 * that all adapters, including the in-process mock, time out the same way.
 */
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { Readable } from 'node:stream';
import { GatewayError } from '../../errors/index.js';
import { upstreamFault } from './upstream-faults.js';
import { dispatchBuffered, dispatchStreamed, textOf, tooLarge, type BufferedAnswer, type StreamedAnswer } from './dispatched-call.js';
import type { CancelSignal } from '../../util/cancellation.js';

export interface UpstreamClientOptions {
  baseUrl: string;
  connectTimeoutMs: number;
  maxConnections: number;
}

export interface UpstreamResponse {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  body: Dispatcher.ResponseData['body'];
}

export class UpstreamClient {
  private readonly pool: Pool;
  /** The base URL's path without a trailing slash, e.g. "/v1"; request paths are appended to it. */
  private readonly basePath: string;

  constructor(options: UpstreamClientOptions) {
    const url = new URL(options.baseUrl);
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(url.origin, {
      connections: options.maxConnections,
      connectTimeout: options.connectTimeoutMs,
      headersTimeout: 0,
      bodyTimeout: 0,
      keepAliveTimeout: 30_000,
    });
  }

  /**
   * Headers for every request of one provider, built once: the JSON content headers, then the
   * adapter's own (which win).
   */
  static headers(own: Record<string, string>): Record<string, string> {
    return { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...own };
  }

  /** `headers` should come from UpstreamClient.headers(), built once per provider. */
  async post(path: string, body: string, headers: Record<string, string>, signal: CancelSignal): Promise<UpstreamResponse> {
    try {
      const res = await this.pool.request({ method: 'POST', path: this.basePath + path, headers, body, signal });
      return { status: res.statusCode, headers: res.headers, body: res.body };
    } catch (err) {
      throw upstreamFault(err, signal);
    }
  }

  /**
   * A POST whose whole answer is wanted as text (a completion, an error body): the cheapest way,
   * for the hot path (see dispatched-call.ts). An answer over `maxBytes` is upstream_malformed_response.
   */
  postForText(path: string, body: string, headers: Record<string, string>, signal: CancelSignal, maxBytes = MAX_UPSTREAM_BODY_BYTES): Promise<BufferedAnswer> {
    return dispatchBuffered(this.pool, { method: 'POST', path: this.basePath + path, headers, body }, signal, maxBytes);
  }

  /** A POST whose answer is read as it arrives (an event stream), chunk by chunk. */
  postForStream(path: string, body: string, headers: Record<string, string>, signal: CancelSignal): Promise<StreamedAnswer> {
    return dispatchStreamed(this.pool, { method: 'POST', path: this.basePath + path, headers, body }, signal);
  }

  /** A GET (no body); `headers` should carry no content-type. */
  get(path: string, headers: Record<string, string>, signal: CancelSignal): Promise<UpstreamResponse> {
    return this.send('GET', path, headers, signal, null);
  }

  delete(path: string, headers: Record<string, string>, signal: CancelSignal): Promise<UpstreamResponse> {
    return this.send('DELETE', path, headers, signal, null);
  }

  /**
   * A POST whose body is streamed as it is produced (a multipart upload of a large file), never
   * held whole. An iterable is wrapped in a Readable because undici destroys a Readable body when
   * the request fails or the signal aborts, which releases whatever feeds it (an open file);
   * undici leaves a bare iterable running.
   */
  postStream(path: string, body: Readable | AsyncIterable<Uint8Array>, headers: Record<string, string>, signal: CancelSignal): Promise<UpstreamResponse> {
    return this.send('POST', path, headers, signal, body instanceof Readable ? body : Readable.from(body, { objectMode: false }));
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private async send(
    method: Dispatcher.HttpMethod,
    path: string,
    headers: Record<string, string>,
    signal: CancelSignal,
    body: Readable | null,
  ): Promise<UpstreamResponse> {
    try {
      const res = await this.pool.request({ method, path: this.basePath + path, headers, body, signal });
      return { status: res.statusCode, headers: res.headers, body: res.body };
    } catch (err) {
      throw upstreamFault(err, signal);
    }
  }
}

/** No chat completion or error body comes near this; a larger one is not a usable answer. */
export const MAX_UPSTREAM_BODY_BYTES = 32 * 1024 * 1024;

/** Reads a whole upstream body as text, mapping transport faults the same way as the request. */
export async function readBodyText(res: UpstreamResponse, signal: CancelSignal, maxBytes = MAX_UPSTREAM_BODY_BYTES): Promise<string> {
  const declared = Number(headerValue(res.headers, 'content-length'));
  if (declared > maxBytes) {
    res.body.destroy();
    throw tooLarge(maxBytes);
  }
  // With a declared length within the cap, undici's own reader is the cheapest way to the text.
  if (declared >= 0) {
    try {
      return await res.body.text();
    } catch (err) {
      throw upstreamFault(err, signal);
    }
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        res.body.destroy();
        throw tooLarge(maxBytes);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    throw upstreamFault(err, signal);
  }
  return textOf(chunks, size);
}

/**
 * The body of a streamed call's error status, for its message. The status alone decides the
 * mapping, so a body that cannot be read gives no message; only a cancellation outranks it.
 */
export async function errorBodyText(res: StreamedAnswer, signal: CancelSignal): Promise<string> {
  try {
    return await res.body.text(MAX_UPSTREAM_BODY_BYTES);
  } catch (err) {
    if (signal.aborted) throw upstreamFault(err, signal);
    return '';
  }
}

/**
 * A body relayed to the caller as it arrives (audio, a video). Faults become GatewayErrors; the
 * connection lost after the answer began is a truncated body, not an unreachable upstream, as
 * for a chat stream. A caller that stops early destroys the connection instead of downloading
 * bytes nobody will see.
 */
export function relayBody(res: UpstreamResponse, signal: CancelSignal): AsyncIterableIterator<Uint8Array> {
  return new RelayedBody(res, relayChunks(res, signal));
}

/**
 * The relay as an iterator whose return() gives the connection up at once, also before the first
 * read: a generator's return() before it started runs none of its code, so a caller who left
 * before the body began would leave it unread on its connection.
 */
class RelayedBody implements AsyncIterableIterator<Uint8Array> {
  constructor(
    private readonly res: UpstreamResponse,
    private readonly chunks: AsyncGenerator<Uint8Array>,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    return this.chunks.next();
  }

  return(): Promise<IteratorResult<Uint8Array>> {
    destroyUnread(this.res);
    return this.chunks.return(undefined);
  }
}

async function* relayChunks(res: UpstreamResponse, signal: CancelSignal): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of res.body) yield chunk as Buffer;
  } catch (err) {
    const fault = upstreamFault(err, signal);
    if (fault.code === 'upstream_unreachable' && !signal.aborted) {
      throw new GatewayError('upstream_stream_truncated', 'The upstream closed the connection before the end of its answer.', { cause: err });
    }
    throw fault;
  } finally {
    destroyUnread(res);
  }
}

function destroyUnread(res: UpstreamResponse): void {
  if (res.body.readableEnded || res.body.destroyed) return;
  // undici reports the destroy as an 'error' event; nobody is listening for it any more.
  res.body.on('error', () => undefined);
  res.body.destroy();
}

/** Drains and discards a body we will not read, so that its connection goes back to the pool. */
export function discardBody(res: UpstreamResponse): void {
  res.body.resume();
  res.body.on('error', () => undefined);
}

export function headerValue(headers: UpstreamResponse['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
