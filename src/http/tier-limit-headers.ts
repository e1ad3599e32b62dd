/**
 * X-RateLimit-* headers for the answers that count no limit (the model list, files, video jobs
 * once created, assets, kept responses): the specification has them on every normal response, so
 * these carry the caller's current state of the tier's own pool, read without counting anything.
 * The headers only inform: when the limiter cannot be read (Redis down under
 * `on_redis_unavailable: reject`), the answer goes out without them rather than being refused.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import type { ModelLimits } from '../core/model-limits.js';

export type LimitHeadersHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

const NONE: Readonly<Record<string, string>> = {};

/** The tier pool's headers for the caller, or none when the limiter cannot be read. */
export async function tierHeadersOf(limits: ModelLimits, principal: Principal): Promise<Readonly<Record<string, string>>> {
  try {
    return (await limits.tierView(principal)).headers;
  } catch {
    return NONE;
  }
}

/** A preHandler: set before the handler runs, so that an error the handler answers carries them too. */
export function tierLimitHeaders(limits: ModelLimits): LimitHeadersHook {
  return async function peekLimits(request, reply) {
    reply.headers(await tierHeadersOf(limits, request.principal as Principal));
  };
}
