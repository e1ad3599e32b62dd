/** Writes an error as the spec's envelope with its retry headers; X-Request-Id is always set. */
import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';
import { envelopeJson, errorHeaders, type GatewayError } from '../errors/index.js';

export function sendError(reply: FastifyReply, err: GatewayError): FastifyReply {
  return reply.code(err.status).headers({ ...errorHeaders(err), 'x-request-id': reply.request.id }).send(envelopeJson(err));
}

/** For replies Fastify no longer manages (hijacked) or never managed (raw server errors). */
export function writeRawError(res: ServerResponse, requestId: string, err: GatewayError): void {
  if (res.headersSent) return;
  const body = envelopeJson(err);
  res.writeHead(err.status, { ...errorHeaders(err), 'x-request-id': requestId, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
