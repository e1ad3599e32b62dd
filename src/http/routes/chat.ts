/**
 * POST /v1/chat/completions: hands the body to the chat pipeline and relays its answer. POST
 * /v1/responses (OpenAI's Responses API) goes through the same pipeline: its request is turned into
 * a chat request, and the answer shown as a response (src/core/responses-presenter.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { ChatCallContext, ChatService } from '../../core/chat-service.js';
import type { Cancellation } from '../../util/cancellation.js';
import { callerCancellation } from '../caller-cancellation.js';
import type { Principal } from '../../auth/principal.js';
import { SSE_HEADERS, writeFrames } from '../stream-writer.js';
import type { AccessLog } from '../access-log.js';
import { auditOf } from '../request-state.js';
import { BUDGET_HEADER, budgetFromHeader } from '../budget-header.js';
import type { InFlightWork } from '../in-flight-work.js';
import { REPLAYED, guardIdempotent, type IdempotencyGuardDeps } from '../idempotency-guard.js';
import type { IdempotentCall } from '../../idempotency/idempotent-call.js';
import { IDEMPOTENCY_HEADER } from '../../idempotency/idempotency-key.js';
import { elapsedMs } from '../request-timing.js';
import { ResponsesPresenter, type ResponsesStream } from '../../core/responses-presenter.js';
import { chatRequestOfResponses, inResponsesTerms, inputItemsOf, itemReferenceIds, previousResponseIdOf } from '../../validation/responses-request.js';
import type { StoredResponses } from '../../responses/stored-responses.js';
import type { ResponseObject } from '../../protocol/responses.js';

/** Keeps the response shown, before the answer's end goes out. */
type Keep = (response: ResponseObject) => Promise<void>;

export interface ChatRouteDeps {
  readonly chat: ChatService;
  readonly logger: Logger;
  readonly accessLog: AccessLog;
  readonly work: InFlightWork;
  readonly idempotency: IdempotencyGuardDeps;
  /** Responses kept for later requests that refer to them. */
  readonly responses: StoredResponses;
}

export function chatRoutes(app: FastifyInstance, deps: ChatRouteDeps): void {
  const { chat, logger, accessLog, work } = deps;
  app.post('/chat/completions', { config: { endpoint: 'chat/completions' } }, (request, reply) => serve(request, reply, false));
  app.post('/responses', { config: { endpoint: 'responses' } }, (request, reply) => serve(request, reply, true));

  async function serve(request: FastifyRequest, reply: FastifyReply, responses: boolean): Promise<FastifyReply | undefined> {
    // Counted until the handler ends: by then its settlement is queued, even for a request a drain cut.
    work.begin();
    try {
      // Requests without the header skip the guard without an await.
      const call = request.headers[IDEMPOTENCY_HEADER] === undefined ? null : await guardIdempotent(request, reply, deps.idempotency, 'chat');
      if (call === REPLAYED) {
        accessLog(reply, reply.statusCode);
        return reply;
      }
      const controller = callerCancellation(reply.raw, call !== null);
      const forget = call === null ? null : work.track(controller, reply.raw);
      const forgetStream = (request.body as { stream?: unknown } | null)?.stream === true ? work.streaming(controller) : null;
      try {
        return responses ? await handleResponses(request, reply, controller, call) : await handle(request, reply, controller, call, request.body, null);
      } finally {
        forget?.();
        forgetStream?.();
        if (call !== null) await call.finish();
      }
    } finally {
      work.end();
    }
  }

  async function handleResponses(request: FastifyRequest, reply: FastifyReply, controller: Cancellation, call: IdempotentCall | null): Promise<FastifyReply | undefined> {
    const accountId = (request.principal as Principal).account.id;
    const ids = itemReferenceIds(request.body);
    const referenced = ids.length === 0 ? undefined : await deps.responses.items(accountId, ids);
    const previousResponseId = previousResponseIdOf(request.body);
    let body = chatRequestOfResponses(request.body, referenced?.value);
    // Checked before the conversation is read, so that a request wrong in itself is told so.
    const history = previousResponseId === null ? undefined : await deps.responses.conversation(accountId, previousResponseId);
    if (history !== undefined) body = chatRequestOfResponses(request.body, referenced?.value, history.value);
    const presenter = new ResponsesPresenter(request.id, request.body as Record<string, unknown>);
    // Kept, as OpenAI keeps them, unless the caller says store: false; before the answer is sent,
    // so that the caller's next request finds the response it refers to.
    const input = inputItemsOf(request.body, referenced?.value);
    const keep: Keep | null = (request.body as { store?: unknown }).store === false ? null : (response) => deps.responses.keep(accountId, { response, input, previousResponseId });
    try {
      // What was read of earlier responses is sent too: the token bound (limits, the credit hold) counts its bytes.
      const readBytes = (referenced?.bytes ?? 0) + (history?.bytes ?? 0);
      return await handle(request, reply, controller, call, body, presenter, keep, readBytes);
    } catch (err) {
      // The pipeline names the chat request's fields; the caller sent a response request. (An
      // error the pipeline recorded for an Idempotency-Key was worded so by the presenter already.)
      throw inResponsesTerms(err);
    }
  }

  async function handle(
    request: FastifyRequest,
    reply: FastifyReply,
    controller: Cancellation,
    call: IdempotentCall | null,
    body: unknown,
    presenter: ResponsesPresenter | null,
    keep: Keep | null = null,
    readBytes = 0,
  ): Promise<FastifyReply | undefined> {
    const res = reply.raw;
    const model = (request.body as { model?: unknown } | null)?.model;
    const audit = auditOf(request);
    if (typeof model === 'string') audit.model = model;
    const ctx: ChatCallContext = {
      requestId: request.id,
      principal: request.principal as Principal,
      controller,
      bodyBytes: request.bodyBytes + readBytes,
      budgetMs: budgetFromHeader(request.headers[BUDGET_HEADER]),
    };
    if (call !== null) ctx.idempotency = call;
    if (presenter !== null) ctx.present = presenter;
    let outcome;
    try {
      outcome = await chat.complete(body, ctx);
    } catch (err) {
      // For the log and the metrics: which route the failed request last tried.
      if (ctx.lastRoute !== undefined) {
        audit.provider = ctx.lastRoute.provider;
        audit.upstreamModel = ctx.lastRoute.upstreamModel;
      }
      throw err;
    }
    audit.provider = outcome.servedBy.provider;
    audit.upstreamModel = outcome.servedBy.upstreamModel;

    if (outcome.kind === 'json') {
      audit.promptTokens = outcome.usage?.prompt_tokens;
      audit.completionTokens = outcome.usage?.completion_tokens;
      audit.upstreamFirstByteMs = outcome.upstreamMs;
      audit.overheadMs = elapsedMs(request, reply.elapsedTime) - outcome.upstreamMs;
      if (keep !== null && presenter?.shown != null) await keep(presenter.shown);
      reply.headers(outcome.headers).header('x-request-id', request.id).header('content-type', 'application/json; charset=utf-8').send(outcome.body);
      accessLog(reply, 200);
      return reply;
    }

    // From here Fastify no longer manages the reply; every outcome is written by hand.
    reply.hijack();
    let completed = false;
    audit.upstreamFirstByteMs = outcome.upstreamHeadersMs;
    audit.upstreamFirstTokenMs = outcome.upstreamMs;
    audit.overheadMs = elapsedMs(request, reply.elapsedTime) - outcome.upstreamMs;
    try {
      // The id first: a property added after a spread misses V8's inline caches (see billing/outcomeOf).
      res.writeHead(200, { 'x-request-id': request.id, ...SSE_HEADERS, ...outcome.headers });
      const frames = presenter === null ? outcome.frames : shown(outcome.frames, presenter.stream(), keep);
      completed = await writeFrames(res, frames, controller.signal, call !== null, outcome.ending);
    } catch (err) {
      logger.error({ err, request_id: request.id }, 'stream relay failed');
      res.destroy();
    } finally {
      outcome.finish();
    }
    const usage = outcome.usage();
    audit.promptTokens = usage?.prompt_tokens;
    audit.completionTokens = usage?.completion_tokens;
    // A stream that ended in an error frame is logged and counted with that error's code.
    const errorCode = outcome.errorCode();
    if (errorCode !== undefined) audit.errorCode = errorCode;
    accessLog(reply, 200, errorCode !== undefined ? 'error' : completed ? 'completed' : 'client_closed');
    return undefined;
  }
}

/** Chat frames shown as Responses events, as they come; the final response kept before the last events go out. */
async function* shown(frames: AsyncIterable<string | Uint8Array>, stream: ResponsesStream, keep: Keep | null): AsyncGenerator<string> {
  let kept = false;
  for await (const chat of frames) {
    // The service gives a shown stream's frames as text; bytes would be the same frames, in UTF-8.
    const events = stream.push(typeof chat === 'string' ? chat : Buffer.from(chat.buffer, chat.byteOffset, chat.byteLength).toString('utf8'));
    if (keep !== null && !kept && stream.response !== null) {
      kept = true;
      await keep(stream.response);
    }
    if (events !== '') yield events;
  }
}
