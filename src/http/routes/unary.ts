/**
 * The POST routes answered in one piece outside chat (embeddings, image generation): each hands its body to the
 * unary pipeline with its operation and relays the answer. The route's work is the same for all:
 * the Idempotency-Key guard, the caller's cancellation, the budget header, the access log.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../auth/principal.js';
import type { UnaryCallContext, UnaryOperation, UnaryService } from '../../core/unary-service.js';
import { IDEMPOTENCY_HEADER } from '../../idempotency/idempotency-key.js';
import type { IdempotentCall } from '../../idempotency/idempotent-call.js';
import type { Cancellation } from '../../util/cancellation.js';
import { callerCancellation } from '../caller-cancellation.js';
import type { AccessLog } from '../access-log.js';
import { BUDGET_HEADER, budgetFromHeader } from '../budget-header.js';
import { REPLAYED, guardIdempotent, type IdempotencyGuardDeps } from '../idempotency-guard.js';
import type { InFlightWork } from '../in-flight-work.js';
import { auditOf } from '../request-state.js';
import { assetUrlFor } from '../public-url.js';

export interface UnaryRouteDeps {
  readonly service: UnaryService;
  readonly accessLog: AccessLog;
  readonly work: InFlightWork;
  readonly idempotency: IdempotencyGuardDeps;
  /** `server.public_url`, for asset links. */
  readonly publicUrl: string | undefined;
}

export interface UnaryEndpoint {
  /** The path under /v1, e.g. `/embeddings`. */
  readonly path: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each endpoint's operation has its own request type.
  readonly operation: UnaryOperation<any>;
}

export function unaryRoutes(app: FastifyInstance, endpoints: readonly UnaryEndpoint[], deps: UnaryRouteDeps): void {
  for (const { path, operation } of endpoints) {
    app.post(path, { config: { endpoint: path.slice(1) } }, async (request, reply) => {
      deps.work.begin();
      try {
        const call = request.headers[IDEMPOTENCY_HEADER] === undefined ? null : await guardIdempotent(request, reply, deps.idempotency, operation.modality);
        if (call === REPLAYED) {
          deps.accessLog(reply, reply.statusCode);
          return reply;
        }
        const controller = callerCancellation(reply.raw, call !== null);
        const forget = call === null ? null : deps.work.track(controller);
        try {
          return await handle(request, reply, operation, controller, call);
        } finally {
          forget?.();
          void call?.finish();
        }
      } finally {
        deps.work.end();
      }
    });
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see UnaryEndpoint.
  async function handle(request: FastifyRequest, reply: FastifyReply, operation: UnaryOperation<any>, controller: Cancellation, call: IdempotentCall | null): Promise<FastifyReply> {
    const model = (request.body as { model?: unknown } | null)?.model;
    const audit = auditOf(request);
    if (typeof model === 'string') audit.model = model;
    const ctx: UnaryCallContext = {
      requestId: request.id,
      principal: request.principal as Principal,
      controller,
      budgetMs: budgetFromHeader(request.headers[BUDGET_HEADER]),
      assetUrl: assetUrlFor(request, deps.publicUrl),
    };
    if (call !== null) ctx.idempotency = call;
    let outcome;
    try {
      outcome = await deps.service.run(operation, request.body, ctx);
    } catch (err) {
      if (ctx.lastRoute !== undefined) {
        audit.provider = ctx.lastRoute.provider;
        audit.upstreamModel = ctx.lastRoute.upstreamModel;
      }
      throw err;
    }
    audit.provider = outcome.servedBy.provider;
    audit.upstreamModel = outcome.servedBy.upstreamModel;
    audit.promptTokens = outcome.promptTokens;
    audit.completionTokens = outcome.completionTokens;
    audit.upstreamFirstByteMs = outcome.upstreamMs;
    audit.overheadMs = reply.elapsedTime - outcome.upstreamMs;
    reply.headers(outcome.headers).header('x-request-id', request.id).header('content-type', outcome.contentType).send(outcome.body);
    deps.accessLog(reply, 200);
    return reply;
  }
}
