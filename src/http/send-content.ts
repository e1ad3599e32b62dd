/**
 * Sends stored bytes (an asset, an uploaded file, a finished video) with single-range requests:
 * 200 with the whole content, 206 with Content-Range for a satisfiable Range, 416 past the end.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/index.js';
import type { BlobRange } from '../storage/blobs/types.js';
import { parseRange } from './range-header.js';

export interface StoredContent {
  readonly bytes: number;
  readonly contentType: string;
  /** What it is, for the 416 message ("asset", "file", "video"). */
  readonly what: string;
  open(range: BlobRange | undefined): Promise<NodeJS.ReadableStream>;
}

/** Returns the status sent. */
export async function sendContent(request: FastifyRequest, reply: FastifyReply, content: StoredContent, cacheControl: string): Promise<number> {
  const header = request.headers.range;
  const range = parseRange(Array.isArray(header) ? undefined : header, content.bytes);
  if (range === 'unsatisfiable') {
    throw new GatewayError('range_not_satisfiable', `The Range "${String(header).slice(0, 100)}" starts past the end of the ${content.what} (${content.bytes} bytes).`, {
      param: 'Range',
      headers: { 'content-range': `bytes */${content.bytes}` },
    });
  }
  const stream = await content.open(range ?? undefined);
  // The type may be an upstream's or an uploader's: a browser must not guess a page out of it.
  reply.header('x-request-id', request.id).header('content-type', content.contentType).header('x-content-type-options', 'nosniff').header('accept-ranges', 'bytes').header('cache-control', cacheControl);
  if (range === null) reply.header('content-length', String(content.bytes));
  else reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${content.bytes}`).header('content-length', String(range.end - range.start + 1));
  reply.send(stream);
  return range === null ? 200 : 206;
}
