/**
 * X-RateLimit-* headers for the endpoints that count no limit (files, video jobs once created,
 * assets, kept responses): the specification has them on every normal response, so these carry
 * the caller's current state of the tier's own pool, read without counting anything, as GET
 * /v1/models does. Set before the handler runs, so an error the handler answers carries them too,
 * as on the limited endpoints.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import type { ModelLimits } from '../core/model-limits.js';

export type LimitHeadersHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

export function tierLimitHeaders(limits: ModelLimits): LimitHeadersHook {
  return async function peekLimits(request, reply) {
    const view = await limits.tierView(request.principal as Principal);
    reply.headers(view.headers);
  };
}
