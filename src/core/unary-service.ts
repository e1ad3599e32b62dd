/**
 * The pipeline of every request answered in one piece outside chat (embeddings now; images and
 * audio use the same path): check the request against the model and the caller, choose a route,
 * count the modality's limits, hold credit, call the routes with failover under the request's
 * deadlines, then settle the limits and the charge (and the Idempotency-Key record) once. An
 * operation says what is particular to its endpoint: validation, needs, token bound, the call.
 */
import { overTokenLimit } from '../limits/over-token-limit.js';
import { GatewayError } from '../errors/index.js';
import type { Principal } from '../auth/principal.js';
import type { ModelCatalog } from '../catalog/model-catalog.js';
import type { LimitPlans } from '../limits/plan.js';
import type { Admission, RateLimiter } from '../limits/types.js';
import { outcomeOf, type Billing, type BilledRequest } from '../billing/billing.js';
import type { CreditHold } from '../billing/types.js';
import type { Router } from '../routing/router.js';
import type { Modality } from '../protocol/modalities.js';
import type { PriceConfig } from '../config/schema.js';
import type { ProviderAdapter } from '../providers/types.js';
import type { CancelSignal } from '../util/cancellation.js';
import type { Cancellation } from '../util/cancellation.js';
import type { IdempotentCall } from '../idempotency/idempotent-call.js';
import { CallDeadlines, type DeadlineSettings } from './deadlines.js';
import { assertModelCapabilities, modelFor } from './model-checks.js';
import { failedSettlement, withHeaders } from './call-failure.js';
import { callRoutes, type ServedBy } from './route-attempts.js';
import type { Requirement } from './required-capabilities.js';

export interface UnaryCallContext {
  requestId: string;
  principal: Principal;
  controller: Cancellation;
  /** A lower generation budget the caller asked for (X-Generation-Budget-Ms), if any. */
  budgetMs?: number;
  lastRoute?: ServedBy;
  idempotency?: IdempotentCall;
  /** The absolute URL at which the caller can fetch an asset (as the caller reached the gateway). */
  assetUrl: (assetId: string) => string;
}

/**
 * A body relayed to the caller as the upstream produces it (speech audio). What it costs is known
 * only at its end: `unitsOf` turns what was relayed into units to charge.
 */
export interface StreamedBody {
  readonly chunks: AsyncIterable<Uint8Array>;
  /** Units (seconds of audio) for `bytes` relayed, given the first bytes (up to HEAD_BYTES) of the body. */
  unitsOf(bytes: number, head: Buffer): number;
}

/** How much of a streamed body's start `unitsOf` is given (enough for a WAV header). */
export const HEAD_BYTES = 4096;

/** What one route's answer comes to: the response body and what to count and charge. */
export interface UnaryAnswer {
  readonly body: string | Buffer | StreamedBody;
  readonly contentType: string;
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Images, or seconds of audio or video, charged at the model's unit price for the modality. */
  readonly units?: number;
}

export interface RouteCall {
  /** The public model id, its price, and the route's provider and upstream model. */
  readonly model: string;
  readonly price: PriceConfig;
  readonly provider: string;
  readonly upstreamModel: string;
  readonly signal: CancelSignal;
  readonly requestId: string;
  readonly accountId: string;
  readonly apiKeyId: string;
  readonly assetUrl: (assetId: string) => string;
}

export interface UnaryOperation<Req extends { model: string }> {
  readonly modality: Modality;
  /** The request field a request too large for the tokens-per-minute limit should shrink. */
  readonly sizeParam: string;
  /** May look things up (an uploaded file named by id), hence the caller and the promise. */
  readonly validate: (body: unknown, principal: Principal) => Req | Promise<Req>;
  readonly needs: (request: Req) => Requirement[];
  /** The most tokens (and units) the request can use: reserved against the limits and held as credit. */
  readonly bound: (request: Req) => { readonly prompt: number; readonly output: number; readonly units?: number };
  readonly call: (adapter: ProviderAdapter, request: Req, route: RouteCall) => Promise<UnaryAnswer>;
}

export interface UnaryOutcome {
  /** An async iterable for a streamed body: iterate it to the end (or `return()` it), then await `done`. */
  readonly body: string | Buffer | AsyncIterable<Uint8Array>;
  /** Resolves once the charge (and record) of a streamed body is committed; already resolved otherwise. */
  readonly done: Promise<void>;
  /** For a streamed body the caller will never iterate (it went away first): ends it as relayed with nothing. */
  readonly abandon: () => void;
  readonly contentType: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly servedBy: ServedBy;
  readonly upstreamMs: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export interface UnaryServiceOptions {
  catalog: ModelCatalog;
  router: Router;
  limiter: RateLimiter;
  plans: LimitPlans;
  billing: Billing;
  deadlines: DeadlineSettings;
}

export class UnaryService {
  constructor(private readonly options: UnaryServiceOptions) {}

  async run<Req extends { model: string }>(operation: UnaryOperation<Req>, body: unknown, ctx: UnaryCallContext): Promise<UnaryOutcome> {
    const { catalog, router, limiter, plans, billing } = this.options;
    const { principal } = ctx;
    const request = await operation.validate(body, principal);
    const model = modelFor(catalog, request.model, principal);
    const needs = operation.needs(request);
    assertModelCapabilities(model, needs);
    const routes = router.plan(model, needs, principal.key.id);
    // Taken before the limits: when no route can serve the model now, the 503 costs the caller nothing.
    const first = routes.next();
    if (first === null) throw routes.unavailable();

    const plan = plans.planFor(principal.tier.name, model.id, operation.modality);
    const bound = operation.bound(request);
    const total = bound.prompt + bound.output;
    const billed: BilledRequest = {
      requestId: ctx.requestId,
      accountId: principal.account.id,
      apiKeyId: principal.key.id,
      model: model.id,
      modality: operation.modality,
      price: model.config.price,
      startedAt: Date.now(),
    };
    let admission: Admission;
    let hold: CreditHold | null;
    try {
      if (plan.tokensPerMinute !== null && total > plan.tokensPerMinute.limit) {
        const message = `This request may use up to ${total} tokens, more than this key's limit of ${plan.tokensPerMinute.limit} tokens per minute, so it can never be admitted. Shorten ${operation.sizeParam}.`;
        throw await overTokenLimit(limiter, principal.key.id, plan, message, operation.sizeParam);
      }
      const admitted = limiter.admit({ keyId: principal.key.id, requestId: ctx.requestId, plan, tokens: plan.tokensPerMinute === null ? 0 : total });
      admission = admitted instanceof Promise ? await admitted : admitted;
    } catch (err) {
      first.health.release();
      throw err;
    }
    try {
      const held = billing.hold(billed, bound.prompt, bound.output, bound.units);
      hold = held instanceof Promise ? await held : held;
    } catch (err) {
      first.health.release();
      admission.settle({ tokens: 0, failed: true });
      throw withHeaders(err, admission.headers);
    }

    const budgetMs = Math.min(model.config.budget_ms ?? this.options.deadlines.budgetMs, ctx.budgetMs ?? Infinity);
    const deadlines = new CallDeadlines(ctx.controller, this.options.deadlines, budgetMs);
    let answered;
    try {
      answered = await callRoutes(routes, first, ctx, deadlines, (route, signal) =>
        operation.call(route.adapter, request, {
          model: model.id,
          price: model.config.price,
          provider: route.provider,
          upstreamModel: route.upstreamModel,
          signal,
          requestId: ctx.requestId,
          accountId: principal.account.id,
          apiKeyId: principal.key.id,
          assetUrl: ctx.assetUrl,
        }),
        // Held: a streamed body (speech) stays under the request's deadlines and cancellation
        // until it has been relayed, not only until the upstream's headers.
        true,
      );
    } catch (err) {
      admission.settle(failedSettlement(err));
      const error = withHeaders(err, admission.headers);
      const servedBy = ctx.lastRoute ?? { provider: first.provider, upstreamModel: first.upstreamModel };
      const record = ctx.idempotency?.recordError(error) ?? null;
      const settled = billing.settle(billed, hold, outcomeOf(servedBy, { promptTokens: 0, completionTokens: 0, charged: false, status: error.status, record }));
      // A recorded outcome is committed before it is answered, so that a resend gets it back.
      if (record !== null) await settled;
      throw error;
    }
    const { result, servedBy, upstreamMs, release, cancel } = answered;
    const counted = { servedBy, upstreamMs, promptTokens: result.promptTokens, completionTokens: result.completionTokens };
    if (typeof result.body === 'object' && !Buffer.isBuffer(result.body)) {
      deadlines.streamStarted(false);
      // Abandoned before it started (the caller left while the upstream answered): the upstream
      // call is cancelled, or under an Idempotency-Key, which keeps it from the caller's own
      // cancellation, its body would stay unread and its connection held.
      const relay = relayStream(result.body, ctx.idempotency !== undefined, deadlines, () => cancel(new GatewayError('client_closed_request')));
      const done = relay.ended.then(async ({ bytes, head, kept, failure }) => {
        release();
        admission.settle({ tokens: result.promptTokens + result.completionTokens, failed: failure !== null && bytes === 0 });
        // Only a whole body is worth replaying; a cut one leaves the key free for a resend.
        const record = failure === null && kept !== null ? (ctx.idempotency?.recordFor(200, { 'content-type': result.contentType }, kept) ?? null) : null;
        const units = bytes === 0 ? 0 : (result.body as StreamedBody).unitsOf(bytes, head);
        await billing.settle(billed, hold, outcomeOf(servedBy, { promptTokens: result.promptTokens, completionTokens: result.completionTokens, units, charged: bytes > 0, status: 200, record }));
      });
      return { body: relay.chunks, done, abandon: relay.abandon, contentType: result.contentType, headers: admission.headers, ...counted };
    }
    release();
    admission.settle({ tokens: result.promptTokens + result.completionTokens, failed: false });
    const record = ctx.idempotency?.recordFor(200, { 'content-type': result.contentType }, result.body) ?? null;
    // The charge is committed before the answer goes out: a client that has it was charged.
    await billing.settle(billed, hold, outcomeOf(servedBy, { promptTokens: result.promptTokens, completionTokens: result.completionTokens, units: result.units ?? 0, charged: true, status: 200, record }));
    return { body: result.body, done: Promise.resolve(), abandon: () => undefined, contentType: result.contentType, headers: admission.headers, ...counted };
  }
}

interface RelayEnd {
  readonly bytes: number;
  readonly head: Buffer;
  /** The whole body, when it is kept for an Idempotency-Key record. */
  readonly kept: Buffer | null;
  readonly failure: unknown;
}

/**
 * Passes a streamed body through while counting it; `ended` resolves when the caller's iteration
 * stops, whether at the end, on an upstream fault, or because the caller went away.
 */
function relayStream(
  body: StreamedBody,
  keep: boolean,
  deadlines: CallDeadlines,
  onAbandon: () => void,
): { chunks: AsyncIterable<Uint8Array>; ended: Promise<RelayEnd>; abandon: () => void } {
  let end!: (value: RelayEnd) => void;
  const ended = new Promise<RelayEnd>((resolve) => (end = resolve));
  let started = false;
  // A generator that never started runs no `finally`: abandoning it must end the relay and close the upstream.
  const abandon = (): void => {
    if (started) return;
    started = true;
    onAbandon();
    end({ bytes: 0, head: Buffer.alloc(0), kept: null, failure: new Error('the caller went away before the body started') });
    void body.chunks[Symbol.asyncIterator]().return?.();
  };
  async function* chunks(): AsyncGenerator<Uint8Array> {
    if (started) return;
    started = true;
    let bytes = 0;
    const head: Buffer[] = [];
    let headBytes = 0;
    const kept: Buffer[] | null = keep ? [] : null;
    let failure: unknown = new Error('the caller stopped reading');
    try {
      for await (const chunk of body.chunks) {
        deadlines.progress();
        bytes += chunk.length;
        if (headBytes < HEAD_BYTES) {
          head.push(Buffer.from(chunk.subarray(0, HEAD_BYTES - headBytes)));
          headBytes += Math.min(chunk.length, HEAD_BYTES - headBytes);
        }
        kept?.push(Buffer.from(chunk));
        yield chunk;
        deadlines.awaitingUpstream();
      }
      failure = null;
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      end({ bytes, head: Buffer.concat(head), kept: kept === null ? null : Buffer.concat(kept), failure });
    }
  }
  return { chunks: chunks(), ended, abandon };
}
