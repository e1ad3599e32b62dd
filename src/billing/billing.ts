/**
 * One request's money, from admission to the committed charge: hold its worst-case cost, then
 * charge what it really used (or nothing, if it failed) and record its usage, in one settlement.
 */
import type { PriceConfig } from '../config/schema.js';
import type { Settlement, UsageRecord } from '../storage/types.js';
import { costMicros } from './pricing.js';
import { MAX_TOKEN_COUNT, usableTokenCount } from '../util/token-count.js';
import type { Modality } from '../protocol/modalities.js';
import type { SettlementWriter } from './settlement-writer.js';
import type { CreditGate, CreditHold } from './types.js';
import type { PendingRecord } from '../idempotency/idempotent-call.js';

export interface BilledRequest {
  readonly requestId: string;
  readonly accountId: string;
  readonly apiKeyId: string;
  readonly model: string;
  readonly modality: Modality;
  readonly price: PriceConfig;
  /** Unix ms. */
  readonly startedAt: number;
}

export interface BillingOutcome {
  /** Tokens to charge for; null when the request is not charged (it failed before producing). */
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Images, or seconds of audio or video, charged at the modality's unit price. */
  readonly units?: number;
  readonly charged: boolean;
  readonly status: number;
  readonly provider: string | null;
  readonly upstreamModel: string | null;
  /** The response to record for the request's Idempotency-Key: committed with the charge. */
  readonly record?: PendingRecord | null;
}

/** Where a request was served: the route's provider and the model name it was sent under. */
export interface ServedRoute {
  readonly provider: string;
  readonly upstreamModel: string;
}

/**
 * An outcome built in one fixed shape. Not `{ ...servedBy, promptTokens, … }`: on Node 20 every
 * property added to an object spread's copy misses V8's inline caches and goes through the runtime
 * (about 1 µs a property; 5 µs for an outcome, measured), and one shape keeps settle monomorphic.
 */
export function outcomeOf(servedBy: ServedRoute, fields: Omit<BillingOutcome, 'provider' | 'upstreamModel'>): BillingOutcome {
  return {
    promptTokens: fields.promptTokens,
    completionTokens: fields.completionTokens,
    units: fields.units ?? 0,
    charged: fields.charged,
    status: fields.status,
    provider: servedBy.provider,
    upstreamModel: servedBy.upstreamModel,
    record: fields.record ?? null,
  };
}

/** Counts come from upstreams (see usableTokenCount); an unusable one charges nothing. */
function tokenCount(n: number): number {
  return usableTokenCount(n) ?? 0;
}

/** Units (seconds of audio or video, images) may be fractional; they only ever enter the cost. */
function unitCount(n: number): number {
  return n > 0 ? Math.min(n, MAX_TOKEN_COUNT) : 0;
}

export class Billing {
  /** Told of every charge, for metrics. */
  onCharge: (model: string, micros: number) => void = () => undefined;

  constructor(
    private readonly credits: CreditGate,
    private readonly writer: SettlementWriter,
  ) {}

  /** Holds the worst-case cost; a request that can cost nothing holds nothing. */
  hold(request: BilledRequest, worstPromptTokens: number, worstCompletionTokens: number, worstUnits = 0): CreditHold | null | Promise<CreditHold> {
    const worst = costMicros(request.price, request.modality, worstPromptTokens, worstCompletionTokens, worstUnits);
    if (worst === 0) return null;
    return this.credits.hold(request.accountId, request.requestId, worst);
  }

  /**
   * Ends the hold, charges, records usage; resolves once committed (see SettlementWriter). Call
   * once per request, on every path.
   */
  settle(request: BilledRequest, hold: CreditHold | null, outcome: BillingOutcome, now = false): Promise<void> {
    try {
      return this.queue(request, hold, outcome, now);
    } catch (err) {
      // The record will never be committed: its claim must not wait for it.
      outcome.record?.settled();
      throw err;
    }
  }

  private queue(request: BilledRequest, hold: CreditHold | null, outcome: BillingOutcome, now: boolean): Promise<void> {
    const promptTokens = outcome.charged ? tokenCount(outcome.promptTokens) : 0;
    const completionTokens = outcome.charged ? tokenCount(outcome.completionTokens) : 0;
    const cost = outcome.charged ? costMicros(request.price, request.modality, promptTokens, completionTokens, unitCount(outcome.units ?? 0)) : 0;
    hold?.end(cost);
    if (cost > 0) this.onCharge(request.model, cost);
    const endedAt = Date.now();
    const usage: UsageRecord = {
      requestId: request.requestId,
      accountId: request.accountId,
      apiKeyId: request.apiKeyId,
      model: request.model,
      provider: outcome.provider,
      upstreamModel: outcome.upstreamModel,
      modality: request.modality,
      promptTokens,
      completionTokens,
      costMicros: cost,
      status: outcome.status,
      latencyMs: endedAt - request.startedAt,
      startedAt: request.startedAt,
      endedAt,
    };
    const settlement: Settlement = {
      requestId: request.requestId,
      charge: cost > 0 ? { accountId: request.accountId, kind: 'charge', amountMicros: -cost, requestId: request.requestId, apiKeyId: request.apiKeyId, note: null } : null,
      releaseReservation: hold?.inStore === true,
      usage,
      idempotency: outcome.record?.record ?? null,
    };
    // Nothing durable to wait for when nothing was charged, held in the store or recorded: the
    // usage record alone is written later, with others.
    if (settlement.charge === null && !settlement.releaseReservation && settlement.idempotency === null) {
      this.writer.record(usage);
      return Promise.resolve();
    }
    // Otherwise it goes in its charge's commit: one row more in a transaction that happens anyway,
    // where a queued record would live (and be copied by every scavenge) until a write of its own.
    return this.writer.commit(settlement, now, outcome.record?.settled);
  }
}
