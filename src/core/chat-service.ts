/**
 * The chat-completions pipeline, free of HTTP: check the request against the model and the caller,
 * choose a route, call the adapter under the request's deadlines, and hand back either a JSON body
 * or a stream of SSE frames. Errors before the answer starts are thrown as GatewayError; errors
 * after a stream started become one error frame.
 */
import { GatewayError, toGatewayError } from '../errors/index.js';
import type { Principal } from '../auth/principal.js';
import type { CatalogModel, ModelCatalog } from '../catalog/model-catalog.js';
import { assertModelCapabilities, modelFor } from './model-checks.js';
import { failedSettlement, withHeaders } from './call-failure.js';
import { callRoutes, type ServedBy } from './route-attempts.js';
import type { ChatCompletion, ChatCompletionRequest, Usage } from '../protocol/chat.js';
import { estimateMessagesTokens } from '../protocol/token-estimate.js';
import { chatTokenBound, type TokenBound } from '../protocol/token-bound.js';
import type { LimitPlans } from '../limits/plan.js';
import type { Admission, RateLimiter } from '../limits/types.js';
import { overTokenLimit } from '../limits/over-token-limit.js';
import { outcomeOf, type Billing, type BilledRequest } from '../billing/billing.js';
import type { CreditHold } from '../billing/types.js';
import type { Router, RouteTarget } from '../routing/router.js';
import { isRouteFault, noteRouteFault } from '../routing/failover.js';
import type { ChatCall, ChatStream, StreamBatch, StreamPiece } from '../providers/types.js';
import { validateChatRequest } from '../validation/chat-request.js';
import { CallDeadlines, type DeadlineSettings } from './deadlines.js';
import { requiredCapabilities, type Requirement } from './required-capabilities.js';
import { DONE_FRAME, SSE_CONTENT_HEADERS, dataFrame, errorFrame } from './sse-frames.js';
import type { IdempotentCall } from '../idempotency/idempotent-call.js';
import type { Cancellation, CancelSignal } from '../util/cancellation.js';
import type { AnswerPresenter } from './responses-presenter.js';

export interface ChatCallContext {
  requestId: string;
  principal: Principal;
  /** The request's one controller: aborted when the caller goes away or a deadline passes. */
  controller: Cancellation;
  /** Size of the request body in bytes: the prompt's token bound for rate limiting. */
  bodyBytes: number;
  /** A lower generation budget the caller asked for (X-Generation-Budget-Ms), if any. */
  budgetMs?: number;
  /** Set by the service: the route of the latest attempt, also when the request fails. */
  lastRoute?: ServedBy;
  /** The Idempotency-Key claim the request runs under: its outcome is recorded with its charge. */
  idempotency?: IdempotentCall;
  /**
   * For a caller of another API than chat completions (the Responses API): how its answer is shown.
   * The JSON body comes back shown; stream frames come back as chat frames, for the route to show
   * as it sends them, and are recorded shown.
   */
  present?: AnswerPresenter;
}

const JSON_CONTENT = { 'content-type': 'application/json; charset=utf-8' } as const;

export type { ServedBy } from './route-attempts.js';

export type ChatOutcome =
  | { kind: 'json'; body: string; usage: Usage | null; servedBy: ServedBy; headers: Readonly<Record<string, string>>; upstreamMs: number }
  | {
      kind: 'stream';
      /** Frames as text, or as the upstream's bytes where they already are the frames (never for a `present`ed caller). */
      frames: AsyncIterable<string | Uint8Array>;
      usage: () => Usage | null;
      servedBy: ServedBy;
      headers: Readonly<Record<string, string>>;
      /** Time to the upstream's first chunk. */
      upstreamMs: number;
      /** Time to the upstream's response headers. */
      upstreamHeadersMs: number;
      /** Ends the request's accounting if the frames were never read to the end; safe to call twice. */
      finish: () => void;
      /** The code of the error frame that ended the stream, if one did. */
      errorCode: () => string | undefined;
      /**
       * True once only the stream's last frame remains, to be yielded after the charge's commit:
       * a writer that holds what it has until then sends the stream's end in one write.
       */
      ending: () => boolean;
    };

export interface ChatServiceOptions {
  catalog: ModelCatalog;
  router: Router;
  limiter: RateLimiter;
  plans: LimitPlans;
  billing: Billing;
  deadlines: DeadlineSettings;
  /** Called with every fault that is the gateway's own (500), for the log. */
  onInternalError: (requestId: string, err: unknown) => void;
}

export class ChatService {
  constructor(private readonly options: ChatServiceOptions) {}

  async complete(body: unknown, ctx: ChatCallContext): Promise<ChatOutcome> {
    const request = validateChatRequest(body);
    const { principal } = ctx;
    const model = modelFor(this.options.catalog, request.model, principal);
    const needs = requiredCapabilities(request);
    checkAgainstModel(request, model, needs);
    const routes = this.options.router.plan(model, needs, principal.key.id);
    // Taken before the limits: when no route can serve the model now, the 503 costs the caller nothing.
    const route = routes.next();
    if (route === null) throw routes.unavailable();

    const plan = this.options.plans.planFor(principal.tier.name, model.id, 'chat');
    const bound = chatTokenBound(request, ctx.bodyBytes, model.tokenFacts);
    let admission: Admission;
    let hold: CreditHold | null;
    const billed: BilledRequest = {
      requestId: ctx.requestId,
      accountId: principal.account.id,
      apiKeyId: principal.key.id,
      model: model.id,
      modality: 'chat',
      price: model.config.price,
      startedAt: Date.now(),
    };
    try {
      if (plan.tokensPerMinute !== null && bound.total > plan.tokensPerMinute.limit) {
        const outputField = request.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
        throw await overTokenLimit(this.options.limiter, principal.key.id, plan, tooManyTokensMessage(bound, plan.tokensPerMinute.limit, outputField), bound.output >= bound.prompt ? outputField : 'messages');
      }
      // The memory backends answer synchronously: an await of a plain value still costs two promises and a turn.
      const admitted = this.options.limiter.admit({ keyId: principal.key.id, requestId: ctx.requestId, plan, tokens: plan.tokensPerMinute === null ? 0 : bound.total });
      admission = admitted instanceof Promise ? await admitted : admitted;
    } catch (err) {
      route.health.release();
      throw err;
    }
    try {
      const held = this.options.billing.hold(billed, bound.prompt, bound.output);
      hold = held instanceof Promise ? await held : held;
    } catch (err) {
      route.health.release();
      admission.settle({ tokens: 0, failed: true });
      throw withHeaders(err, admission.headers);
    }

    const budgetMs = Math.min(model.config.budget_ms ?? this.options.deadlines.budgetMs, ctx.budgetMs ?? Infinity);
    const deadlines = new CallDeadlines(ctx.controller, this.options.deadlines, budgetMs);
    const upstreamCall = (signal: CancelSignal, upstreamModel: string): ChatCall => ({
      request, upstreamModel, signal, requestId: ctx.requestId, defaultMaxTokens: model.config.max_output_tokens,
    });
    try {
      if (request.stream !== true) {
        const answered = await callRoutes(routes, route, ctx, deadlines, (target, signal) => target.adapter.chat(upstreamCall(signal, target.upstreamModel)));
        const { result, servedBy, upstreamMs } = answered;
        const usage = result.usage ?? estimatedUsage(request, result.completion, bound.output);
        admission.settle({ tokens: usage.prompt_tokens + usage.completion_tokens, failed: false });
        const raw = result.rawJson ?? JSON.stringify(result.completion);
        const body = ctx.present === undefined ? raw : ctx.present.json(raw, usage);
        const record = ctx.idempotency?.recordFor(200, JSON_CONTENT, body) ?? null;
        // The charge is committed before the answer goes out: a client that has it was charged.
        await this.options.billing.settle(billed, hold, outcomeOf(servedBy, { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens, charged: true, status: 200, record }));
        return { kind: 'json', body, usage: result.usage, servedBy, headers: admission.headers, upstreamMs };
      }
      // Read ahead to the first chunk: until it arrives nothing has reached the caller, so a
      // failure can still move to another route.
      const answered = await callRoutes(routes, route, ctx, deadlines, async (target, signal) => {
        const started = performance.now();
        const upstream = await target.adapter.chatStream(upstreamCall(signal, target.upstreamModel));
        const headersMs = performance.now() - started;
        const iterator = upstream[Symbol.asyncIterator]();
        return { upstream, iterator, first: await iterator.next(), headersMs, target };
      }, true, true);
      deadlines.streamStarted();
      const { result, servedBy, upstreamMs, release, completed } = answered;
      const { upstream, iterator, first, headersMs, target } = result;
      const tally = new StreamTally({
        admission, billing: this.options.billing, billed, hold, stream: upstream, bound, request, servedBy,
        recorder: ctx.idempotency ?? null,
        present: ctx.present ?? null,
        release,
        completed,
      });
      return {
        kind: 'stream',
        frames: this.frames(iterator, first, request.stream_options?.include_usage === true, deadlines, tally, ctx, target),
        usage: () => upstream.usage,
        servedBy,
        headers: admission.headers,
        upstreamMs,
        upstreamHeadersMs: headersMs,
        finish: () => void tally.settle(),
        errorCode: () => tally.errorCode,
        ending: () => tally.ending,
      };
    } catch (err) {
      const error = toGatewayError(err);
      admission.settle(failedSettlement(error));
      const headed = withHeaders(error, admission.headers);
      // Recorded as it is answered: a replay repeats the first answer byte for byte.
      const answered = ctx.present === undefined ? headed : ctx.present.error(headed);
      const record = ctx.idempotency?.recordError(answered) ?? null;
      const servedBy = ctx.lastRoute ?? { provider: route.provider, upstreamModel: route.upstreamModel };
      const settled = this.options.billing.settle(billed, hold, outcomeOf(servedBy, { promptTokens: 0, completionTokens: 0, charged: false, status: answered.status, record }));
      // A recorded outcome is committed before it is answered, so that a resend gets it back.
      if (record !== null) await settled;
      throw answered;
    }
  }

  private async *frames(
    iterator: AsyncIterator<StreamBatch>,
    first: IteratorResult<StreamBatch>,
    includeUsage: boolean,
    deadlines: CallDeadlines,
    tally: StreamTally,
    ctx: ChatCallContext,
    route: RouteTarget,
  ): AsyncGenerator<string | Uint8Array> {
    // The upstream's bytes are relayed only where the frames are not also kept or shown otherwise.
    const asRead = tally.transcript === null && ctx.present === undefined;
    try {
      for (let next = first; next.done !== true; next = await iterator.next()) {
        deadlines.progress();
        const batch = next.value;
        const wire = asRead ? batch.wire : undefined;
        let i = 0;
        if (wire !== undefined) {
          for (; i < wire.pieces; i++) tally.produced += (batch[i] as StreamPiece).tokens ?? 1;
          yield wire.bytes;
        }
        let frames = '';
        for (; i < batch.length; i++) {
          const piece = batch[i] as StreamPiece;
          if (piece.usageOnly === true) {
            if (includeUsage) frames += dataFrame(piece.data);
          } else {
            frames += dataFrame(piece.data);
            tally.produced += piece.tokens ?? 1;
          }
        }
        if (frames !== '') {
          tally.transcript?.push(frames);
          yield frames;
        }
        deadlines.awaitingUpstream();
      }
      tally.completed = true;
      tally.routeCompleted();
      // A shown stream always ends with its usage (a Responses API response has one, and clients
      // read it): for an upstream that reported none, what the stream is charged for.
      const counted = ctx.present === undefined ? null : tally.countedUsage();
      if (counted !== null) {
        const frame = dataFrame(JSON.stringify({ object: 'chat.completion.chunk', choices: [], usage: counted }));
        tally.transcript?.push(frame);
        yield frame;
      }
      // Committed before the stream's end reaches the client.
      tally.ending = true;
      await tally.settle({ status: 200, frame: DONE_FRAME });
      yield DONE_FRAME;
    } catch (err) {
      // The caller went away: nobody to send an error frame to.
      const reason: unknown = ctx.controller.signal.reason;
      if (reason instanceof GatewayError && reason.code === 'client_closed_request') return;
      tally.failed = tally.produced === 0;
      const error = toGatewayError(err);
      if (!ctx.controller.aborted && isRouteFault(error)) {
        noteRouteFault(route.health, error);
        tally.routeJudged = true;
      }
      if (error.status === 500) this.options.onInternalError(ctx.requestId, err);
      const frame = errorFrame(error);
      tally.errorCode = error.code;
      tally.ending = true;
      await tally.settle({ status: error.status, code: error.code, frame });
      yield frame;
    } finally {
      // The route answered and nothing it did ended the stream (it completed, or the caller left,
      // or its budget ran out): a success for its breaker.
      tally.routeCompleted();
      void tally.settle();
    }
  }
}

/**
 * For an upstream that answered without usage: the prompt's estimate and about four characters a
 * completion token, at most the output cap the upstream was given (and the credit held for), as a
 * stream cut short is counted: text of more than four characters a token (runs of spaces in code)
 * must not be billed past what the upstream could have produced.
 */
function estimatedUsage(request: ChatCompletionRequest, completion: ChatCompletion, outputCap: number): Usage {
  let chars = 0;
  for (const choice of completion.choices) {
    const content = choice.message.content;
    if (typeof content === 'string') chars += content.length;
    for (const call of choice.message.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length;
  }
  const prompt = estimateMessagesTokens(request.messages);
  const output = Math.min(Math.ceil(chars / 4), outputCap);
  return { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output };
}

interface StreamTallyParts {
  admission: Admission;
  billing: Billing;
  billed: BilledRequest;
  hold: CreditHold | null;
  stream: ChatStream;
  bound: TokenBound;
  request: ChatCompletionRequest;
  servedBy: ServedBy;
  /** The Idempotency-Key claim, whose record is the stream as sent. */
  recorder: IdempotentCall | null;
  /** How the stream is shown to its caller, if not as chat frames: the record is what was sent. */
  present: AnswerPresenter | null;
  /** Ends the attempt: its timers, its tie to the request, the route's in-flight count. */
  release: () => void;
  /** Tells the route's breaker that the stream ran to its end. */
  completed: () => void;
}

/** How a stream ended, for its record: the outcome's status (and error code) and the last frame sent. */
interface StreamEnd {
  status: number;
  code?: string;
  frame: string;
}

/**
 * Counts what a stream delivered, and settles it once: limits and charge. A stream that ran to its
 * end counts the upstream's usage. One the caller or the upstream cut short, before the upstream's
 * final usage, counts the completion tokens relayed (one per chunk unless the adapter knows
 * better, at most the output cap) and, for the prompt, its bound towards the rate limit (nothing
 * better is known, and a limit must not be undercounted) but its estimate on the bill (a caller is
 * not charged more than it likely used).
 */
class StreamTally {
  produced = 0;
  completed = false;
  /** The upstream failed before producing anything: not charged, and the daily cap gets the request back. */
  failed = false;
  /** The code of the error frame that ended the stream, if one did. */
  errorCode: string | undefined = undefined;
  /** Only the stream's last frame, sent once the settlement is committed, remains. */
  ending = false;
  /** The frames sent, kept only when the stream is recorded for an Idempotency-Key. */
  readonly transcript: string[] | null;
  private settled: Promise<void> | null = null;

  constructor(private readonly parts: StreamTallyParts) {
    this.transcript = parts.recorder === null ? null : [];
  }

  /** Set once the route's breaker was told how the stream went. */
  routeJudged = false;

  /** A success for the stream's route, unless its breaker was already told; before the attempt is released. */
  routeCompleted(): void {
    if (this.routeJudged) return;
    this.routeJudged = true;
    this.parts.completed();
  }

  /**
   * What a completed stream is charged for when its upstream reported no usage (as `settle` counts
   * it), or null when the upstream did.
   */
  countedUsage(): Usage | null {
    const { stream, bound, request } = this.parts;
    if (stream.usage !== null) return null;
    const prompt = estimateMessagesTokens(request.messages);
    const completion = Math.min(bound.output, this.produced);
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  }

  /** `end`: how the stream ended, when it ended in a frame of its own (not cut off). */
  settle(end?: StreamEnd): Promise<void> {
    if (this.settled !== null) return this.settled;
    const { admission, billing, billed, hold, stream, bound, request, servedBy, release, recorder, present } = this.parts;
    release();
    const usage = stream.usage;
    const final = this.completed && usage !== null;
    const completion = final ? usage.completion_tokens : Math.min(bound.output, Math.max(usage?.completion_tokens ?? 0, this.produced));
    const knownPrompt = final ? usage.prompt_tokens : usage?.prompt_tokens;
    admission.settle({ tokens: (knownPrompt ?? bound.prompt) + completion, failed: this.failed });
    let record = null;
    let binding: Promise<void> | null = null;
    if (end !== undefined && this.transcript !== null && recorder !== null) {
      const sent = this.transcript.join('') + end.frame;
      record = recorder.recordFor(200, SSE_CONTENT_HEADERS, present === null ? sent : present.transcript(sent), end);
      // Nothing to replay (a retryable error frame): the key's binding is committed, and its claim
      // given back, before the last frame goes out, so that the caller's immediate resend runs.
      if (record === null) binding = recorder.finish();
    }
    const outcome = outcomeOf(servedBy, { promptTokens: knownPrompt ?? estimateMessagesTokens(request.messages), completionTokens: completion, charged: !this.failed, status: 200, record });
    const charged = billing.settle(billed, hold, outcome, true);
    this.settled = binding === null ? charged : Promise.all([charged, binding]).then(() => undefined);
    return this.settled;
  }
}

function tooManyTokensMessage(bound: TokenBound, limit: number, outputField: string): string {
  return `This request may use up to ${bound.total} tokens (prompt at most ${bound.prompt} by its size, output at most ${bound.output}), more than this key's limit of ${limit} tokens per minute, so it can never be admitted. Lower ${outputField} or shorten the messages.`;
}

/** Rules that need the model: capabilities, the output cap and the context window. */
function checkAgainstModel(request: ChatCompletionRequest, model: CatalogModel, needs: readonly Requirement[]): void {
  assertModelCapabilities(model, needs);
  const limit = model.config.max_output_tokens;
  const maxField = request.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
  const maxOutput = request.max_completion_tokens ?? request.max_tokens ?? null;
  if (maxOutput !== null && maxOutput > limit) {
    throw new GatewayError('invalid_parameter', `${maxField} is too large: ${maxOutput}. The model "${model.id}" produces at most ${limit} output tokens.`, { param: maxField });
  }
  const prompt = estimateMessagesTokens(request.messages);
  const window = model.config.context_window;
  if (prompt + (maxOutput ?? 0) > window) {
    const asked = maxOutput === null ? '' : ` plus ${maxField} (${maxOutput})`;
    throw new GatewayError(
      'context_length_exceeded',
      `The prompt (about ${prompt} tokens)${asked} exceeds the context window of the model "${model.id}" (${window} tokens). Shorten the messages${maxOutput === null ? '' : ` or lower ${maxField}`}.`,
      { param: maxOutput === null ? 'messages' : maxField },
    );
  }
}
