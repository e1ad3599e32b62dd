/**
 * The POST routes outside chat (embeddings, images, speech, transcriptions, videos): each hands its
 * body to the unary pipeline with its operation and relays the answer, in one piece or streamed
 * (speech). The route's work is the same for all: a multipart form received into the blob store
 * first where the endpoint takes files, the Idempotency-Key guard, the caller's cancellation,
 * the budget header, the access log.
 */
import type { BlobStore } from '../../storage/blobs/types.js';
import type { ContentTypeFilter } from '../../uploads/content-types.js';
import type { IdempotencyRecord } from '../../storage/types.js';
import { isMultipart, receiveForm, type ReceivedForm } from '../multipart-form.js';
import { formBodies } from '../form-body.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
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
import { elapsedMs } from '../request-timing.js';
import { isStreamed, sendStreamedBody } from '../streamed-body.js';

export interface UnaryRouteDeps {
  readonly service: UnaryService;
  readonly logger: Logger;
  readonly accessLog: AccessLog;
  readonly work: InFlightWork;
  readonly idempotency: IdempotencyGuardDeps;
  /** `server.public_url`, for asset links. */
  readonly publicUrl: string | undefined;
  /** Where form files go while a request uses them, what they may be, how long their body may be silent. */
  readonly uploads: { readonly blobs: BlobStore; readonly maxBytes: number; readonly contentTypes: ContentTypeFilter; readonly idleTimeoutMs: number };
}

/** An endpoint that takes multipart forms. */
export interface FormIntake {
  /** The fields that may carry a file. */
  readonly fileFields: readonly string[];
  /** Whether a JSON body is refused (the endpoint needs its file). */
  readonly formOnly: boolean;
}

export interface UnaryEndpoint {
  /** The path under /v1, e.g. `/embeddings`. */
  readonly path: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each endpoint's operation has its own request type.
  readonly operation: UnaryOperation<any>;
  readonly form?: FormIntake;
  /** Checked before a recorded response is replayed; may refuse with an error (a video job still running). */
  readonly beforeReplay?: (record: IdempotencyRecord) => Promise<void>;
}

export function unaryRoutes(app: FastifyInstance, endpoints: readonly UnaryEndpoint[], deps: UnaryRouteDeps): void {
  for (const endpoint of endpoints) {
    const { path, operation } = endpoint;
    app.post(path, { config: { endpoint: path.slice(1) } }, async (request, reply) => {
      deps.work.begin();
      let form: ReceivedForm | null = null;
      try {
        let fingerprintBody: unknown = request.body;
        if (endpoint.form !== undefined && (endpoint.form.formOnly || isMultipart(request))) {
          const { blobs, maxBytes, contentTypes, idleTimeoutMs } = deps.uploads;
          form = await receiveForm(request, blobs, { maxFileBytes: maxBytes, fileFields: endpoint.form.fileFields, contentTypes, idleTimeoutMs });
          const bodies = formBodies(form);
          request.body = bodies.body;
          fingerprintBody = bodies.fingerprint;
        }
        const call = request.headers[IDEMPOTENCY_HEADER] === undefined ? null : await guardIdempotent(request, reply, deps.idempotency, operation.modality, fingerprintBody, endpoint.beforeReplay);
        if (call === REPLAYED) {
          deps.accessLog(reply, reply.statusCode);
          return reply;
        }
        const controller = callerCancellation(reply.raw, call !== null);
        const forget = call === null ? null : deps.work.track(controller, reply.raw);
        try {
          return await handle(request, reply, operation, controller, call);
        } finally {
          forget?.();
          if (call !== null) await call.finish();
        }
      } finally {
        await form?.discard();
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
    audit.overheadMs = elapsedMs(request, reply.elapsedTime) - outcome.upstreamMs;
    if (isStreamed(outcome)) {
      const { status, end } = await sendStreamedBody(request, reply, outcome, controller, call !== null, deps.logger);
      deps.accessLog(reply, status, end);
      return reply;
    }
    reply.headers(outcome.headers).header('x-request-id', request.id).header('content-type', outcome.contentType).send(outcome.body);
    deps.accessLog(reply, 200);
    return reply;
  }
}
