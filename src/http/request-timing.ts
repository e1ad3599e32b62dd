/**
 * When each request arrived, for the access log's duration and the overhead metric. Fastify only
 * times replies when it has a logger or an onResponse hook, and Tollgate has neither on purpose
 * (both cost more per request than the line they would time), so `reply.elapsedTime` reads 0:
 * the arrival is stamped on the raw request by the listener that sees every request first.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';

interface Stamped extends IncomingMessage {
  tollgateArrivedAt?: number;
}

export function stampArrival(req: IncomingMessage): void {
  (req as Stamped).tollgateArrivedAt = performance.now();
}

/** Milliseconds since the request arrived (Fastify's own timing where nothing stamped it). */
export function elapsedMs(request: FastifyRequest, fallback: number): number {
  const arrived = (request.raw as Stamped).tollgateArrivedAt;
  return arrived === undefined ? fallback : performance.now() - arrived;
}
