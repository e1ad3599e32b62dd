/**
 * The pipeline of every request answered in one piece outside chat (embeddings now; images and
 * audio use the same path): check the request against the model and the caller, choose a route,
 * count the modality's limits, hold credit, call the routes with failover under the request's
 * deadlines, then settle the limits and the charge (and the Idempotency-Key record) once. An
 * operation says what is particular to its endpoint: validation, needs, token bound, the call.
 */
import { GatewayError } from '../errors/index.js';
import type { Principal } from '../auth/principal.js';
import type { ModelCatalog } from '../catalog/model-catalog.js';
import type { LimitPlans } from '../limits/plan.js';
import type { Admission, RateLimiter } from '../limits/types.js';
import type { Billing, BilledRequest } from '../billing/billing.js';
import type { CreditHold } from '../billing/types.js';
import type { Router } from '../routing/router.js';
import type { Modality } from '../protocol/modalities.js';
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

/** What one route's answer comes to: the response body and what to count and charge. */
export interface UnaryAnswer {
  readonly body: string | Buffer;
  readonly contentType: string;
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Images, or seconds of audio or video, charged at the model's unit price for the modality. */
  readonly units?: number;
}

export interface RouteCall {
  readonly upstreamModel: string;
  readonly signal: CancelSignal;
  readonly requestId: string;
  readonly accountId: string;
  readonly assetUrl: (assetId: string) => string;
}

export interface UnaryOperation<Req extends { model: string }> {
  readonly modality: Modality;
  /** The request field a request too large for the tokens-per-minute limit should shrink. */
  readonly sizeParam: string;
  readonly validate: (body: unknown) => Req;
  readonly needs: (request: Req) => Requirement[];
  /** The most tokens (and units) the request can use: reserved against the limits and held as credit. */
  readonly bound: (request: Req) => { readonly prompt: number; readonly output: number; readonly units?: number };
  readonly call: (adapter: ProviderAdapter, request: Req, route: RouteCall) => Promise<UnaryAnswer>;
}

export interface UnaryOutcome {
  readonly body: string | Buffer;
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
    const request = operation.validate(body);
    const { principal } = ctx;
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
        throw new GatewayError(
          'request_exceeds_token_limit',
          `This request may use up to ${total} tokens, more than this key's limit of ${plan.tokensPerMinute.limit} tokens per minute, so it can never be admitted. Shorten ${operation.sizeParam}.`,
          { param: operation.sizeParam },
        );
      }
      admission = await limiter.admit({ keyId: principal.key.id, requestId: ctx.requestId, plan, tokens: plan.tokensPerMinute === null ? 0 : total });
    } catch (err) {
      first.health.release();
      throw err;
    }
    try {
      hold = await billing.hold(billed, bound.prompt, bound.output, bound.units);
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
        operation.call(route.adapter, request, { upstreamModel: route.upstreamModel, signal, requestId: ctx.requestId, accountId: principal.account.id, assetUrl: ctx.assetUrl }),
      );
    } catch (err) {
      admission.settle(failedSettlement(err));
      const error = withHeaders(err, admission.headers);
      const servedBy = ctx.lastRoute ?? { provider: first.provider, upstreamModel: first.upstreamModel };
      const record = ctx.idempotency?.recordError(error) ?? null;
      const settled = billing.settle(billed, hold, { ...servedBy, promptTokens: 0, completionTokens: 0, charged: false, status: error.status, record });
      // A recorded outcome is committed before it is answered, so that a resend gets it back.
      if (record !== null) await settled;
      throw error;
    }
    const { result, servedBy, upstreamMs } = answered;
    admission.settle({ tokens: result.promptTokens + result.completionTokens, failed: false });
    const record = ctx.idempotency?.recordFor(200, { 'content-type': result.contentType }, result.body) ?? null;
    // The charge is committed before the answer goes out: a client that has it was charged.
    await billing.settle(billed, hold, { ...servedBy, promptTokens: result.promptTokens, completionTokens: result.completionTokens, units: result.units ?? 0, charged: true, status: 200, record });
    return { body: result.body, contentType: result.contentType, headers: admission.headers, servedBy, upstreamMs, promptTokens: result.promptTokens, completionTokens: result.completionTokens };
  }
}
