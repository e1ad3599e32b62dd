/** Writes an error as the spec's envelope with its retry headers; X-Request-Id is always set. */
import type { FastifyReply } from 'fastify';
import { envelopeJson, errorHeaders, type GatewayError } from '../errors/index.js';

export function sendError(reply: FastifyReply, err: GatewayError): FastifyReply {
  return reply.code(err.status).headers({ 'x-request-id': reply.request.id, ...errorHeaders(err) }).send(envelopeJson(err));
}
