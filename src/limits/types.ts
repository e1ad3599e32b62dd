/**
 * The rate limiter's contract (spec section 8). A limiter counts four quantities per API key:
 * requests per minute, tokens per minute, requests per UTC day for the request's modality, and
 * requests in flight. Backends (memory, Redis) count; what the counts mean for the caller
 * (headers, 429 errors) is decided in one place (see outcome.ts) for all of them.
 */
import type { LimitPlan } from './plan.js';

export interface AdmissionRequest {
  readonly keyId: string;
  readonly requestId: string;
  readonly plan: LimitPlan;
  /** Tokens to reserve until the request settles: an upper bound of what it can use. */
  readonly tokens: number;
}

/** What a request used, told to its admission when it ends. */
export interface Settlement {
  /** Tokens it really used, or null when unknown (the reservation then stands). */
  readonly tokens: number | null;
  /** The request failed before producing anything: it does not count against the daily cap. */
  readonly failed: boolean;
}

export interface Admission {
  /** X-RateLimit-* headers for the response. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Releases the in-flight slot and turns the token reservation into what was used. Only the
   * first call counts, so every path that ends a request may call it.
   */
  settle(settlement: Settlement): void;
}

/** A quantity's state as GET /v1/models/{model} reports it. */
export interface QuotaState {
  readonly limit: number;
  readonly remaining: number;
  /** Unix seconds at which everything counted now has left the window (absent for in-flight). */
  readonly reset?: number;
}

export interface LimitsSnapshot {
  readonly requests_per_minute: QuotaState | null;
  readonly tokens_per_minute: QuotaState | null;
  readonly daily: QuotaState | null;
  readonly in_flight: QuotaState | null;
}

export interface LimitsView {
  readonly snapshot: LimitsSnapshot;
  readonly headers: Readonly<Record<string, string>>;
}

export interface RateLimiter {
  /**
   * Counts the request and admits it, or throws the 429 GatewayError of the quantity that ran
   * out. Memory answers synchronously; Redis with a promise.
   */
  admit(request: AdmissionRequest): Admission | Promise<Admission>;
  /** The current state without counting anything. */
  peek(keyId: string, plan: LimitPlan): LimitsView | Promise<LimitsView>;
  close(): Promise<void>;
}

/** What a backend counted for one admission attempt, in the units of the plan. */
export interface Counts {
  readonly admitted: boolean;
  /** The backend's clock, in Unix milliseconds. */
  readonly nowMs: number;
  /** Requests in the window, this one included. */
  readonly requests: number;
  /** Tokens in the window, this request's reservation included when admitted. */
  readonly tokens: number;
  /** Today's requests for the modality, this one included when admitted. */
  readonly day: number;
  /** Requests in flight, this one included when admitted. */
  readonly inFlight: number;
  /** Per-second amounts in the windows, oldest first; only needed to explain a rejection. */
  readonly requestBuckets: readonly Bucket[];
  readonly tokenBuckets: readonly Bucket[];
}

/** A second of a sliding window and what was counted in it. */
export interface Bucket {
  readonly second: number;
  readonly amount: number;
}
