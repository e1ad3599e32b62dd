/**
 * When each request arrived, for the access log's duration and the overhead metric. Fastify only
 * times replies when it has a logger or an onResponse hook, and Tollgate has neither on purpose
 * (both cost more per request than the line they would time), so `reply.elapsedTime` reads 0.
 * The server makes its requests as ArrivedMessage, which notes the time in its constructor: a
 * property added to every request later would change its shape on every request.
 */
import { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';

export class ArrivedMessage extends IncomingMessage {
  readonly arrivedAt = performance.now();
}

/** Milliseconds since the request arrived (Fastify's own timing for a request made elsewhere). */
export function elapsedMs(request: FastifyRequest, fallback: number): number {
  const raw = request.raw;
  return raw instanceof ArrivedMessage ? performance.now() - raw.arrivedAt : fallback;
}
