/**
 * What a backend's counts mean for the caller, the same for every backend: the X-RateLimit-*
 * headers, and for a refused request the 429 that names the quantity that ran out, says the limit
 * and when it frees, and carries an honest Retry-After (a request sent after it is admitted unless
 * other traffic took the room first).
 */
import { GatewayError, type ErrorCode } from '../errors/index.js';
import type { LimitPlan } from './plan.js';
import type { Bucket, Counts, LimitsSnapshot, QuotaState } from './types.js';
import { WINDOW_BUCKETS, msUntilRoom } from './window.js';

const DAY_MS = 86_400_000;
/** In-flight slots free when other requests end, which nobody can foresee: one second is the honest minimum. */
const IN_FLIGHT_RETRY_MS = 1_000;

/** Unix seconds at which everything now counted in a window has left it. */
function resetSecond(buckets: readonly Bucket[], counted: number, nowMs: number): number {
  const last = buckets.at(-1);
  if (last !== undefined) return last.second + WINDOW_BUCKETS;
  const now = Math.floor(nowMs / 1000);
  return counted > 0 ? now + WINDOW_BUCKETS : now;
}

export function nextUtcMidnightMs(nowMs: number): number {
  return (Math.floor(nowMs / DAY_MS) + 1) * DAY_MS;
}

export function limitHeaders(plan: LimitPlan, counts: Counts): Record<string, string> {
  const headers: Record<string, string> = {};
  const rpm = plan.requestsPerMinute;
  if (rpm !== null) {
    headers['x-ratelimit-limit'] = String(rpm.limit);
    headers['x-ratelimit-remaining'] = String(Math.max(0, rpm.limit - counts.requests));
    headers['x-ratelimit-reset'] = String(resetSecond(counts.requestBuckets, counts.requests, counts.nowMs));
  }
  const tpm = plan.tokensPerMinute;
  if (tpm !== null) {
    headers['x-ratelimit-limit-tokens'] = String(tpm.limit);
    headers['x-ratelimit-remaining-tokens'] = String(Math.max(0, tpm.limit - counts.tokens));
  }
  return headers;
}

export function snapshotOf(plan: LimitPlan, counts: Counts): LimitsSnapshot {
  const state = (limit: number, used: number, reset?: number): QuotaState => ({ limit, remaining: Math.max(0, limit - used), ...(reset === undefined ? {} : { reset }) });
  const { requestsPerMinute: rpm, tokensPerMinute: tpm, daily, inFlight } = plan;
  return {
    requests_per_minute: rpm && state(rpm.limit, counts.requests, resetSecond(counts.requestBuckets, counts.requests, counts.nowMs)),
    tokens_per_minute: tpm && state(tpm.limit, counts.tokens, resetSecond(counts.tokenBuckets, counts.tokens, counts.nowMs)),
    daily: daily && state(daily.limit, counts.day, nextUtcMidnightMs(counts.nowMs) / 1000),
    in_flight: inFlight && state(inFlight.limit, counts.inFlight),
  };
}

interface Shortfall {
  code: ErrorCode;
  waitMs: number;
  message: string;
}

function poolWords(plan: LimitPlan, pool: string): string {
  return pool === '*' ? `on tier "${plan.tier}"` : `for the model group of "${plan.model}" on tier "${plan.tier}"`;
}

function inSeconds(ms: number): string {
  const s = Math.max(1, Math.ceil(ms / 1000));
  if (s < 120) return `${s} s`;
  const minutes = Math.ceil(s / 60);
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The 429 for a refused request; `tokens` is the reservation it asked for. */
export function rejection(plan: LimitPlan, counts: Counts, tokens: number): GatewayError {
  const { nowMs } = counts;
  const shortfalls: Shortfall[] = [];
  // Waits of quantities that did not refuse still count: the retry must find room in all of them.
  let waitMs = 0;
  const rpm = plan.requestsPerMinute;
  if (rpm !== null) {
    const wait = msUntilRoom(counts.requestBuckets, counts.requests, rpm.limit, 1, nowMs);
    waitMs = Math.max(waitMs, wait);
    if (counts.requests > rpm.limit) {
      shortfalls.push({
        code: 'requests_per_minute_exceeded',
        waitMs: wait,
        message: `Rate limit reached: ${rpm.limit} requests per minute ${poolWords(plan, rpm.pool)}. This key sent ${counts.requests} requests in the last minute, refused ones included; the next one is admitted in ${inSeconds(wait)}. Wait for Retry-After: retrying sooner keeps the limit in force.`,
      });
    }
  }
  const tpm = plan.tokensPerMinute;
  if (tpm !== null && counts.tokens + tokens > tpm.limit) {
    const wait = msUntilRoom(counts.tokenBuckets, counts.tokens, tpm.limit, tokens, nowMs);
    const bounded = Number.isFinite(wait) ? wait : WINDOW_BUCKETS * 1000;
    waitMs = Math.max(waitMs, bounded);
    shortfalls.push({
      code: 'tokens_per_minute_exceeded',
      waitMs: bounded,
      message: `Rate limit reached: ${tpm.limit} tokens per minute ${poolWords(plan, tpm.pool)}. ${counts.tokens} tokens are used or reserved in the last minute and this request may use up to ${tokens}; there is room in ${inSeconds(bounded)}.`,
    });
  }
  const daily = plan.daily;
  if (daily !== null && counts.day + 1 > daily.limit) {
    const wait = nextUtcMidnightMs(nowMs) - nowMs;
    waitMs = Math.max(waitMs, wait);
    shortfalls.push({
      code: 'daily_cap_exceeded',
      waitMs: wait,
      message: `Daily cap reached: ${daily.limit} ${plan.modality} requests per day ${poolWords(plan, daily.pool)}. It resets at 00:00 UTC, in ${inSeconds(wait)}.`,
    });
  }
  const inFlight = plan.inFlight;
  if (inFlight !== null && counts.inFlight + 1 > inFlight.limit) {
    waitMs = Math.max(waitMs, IN_FLIGHT_RETRY_MS);
    shortfalls.push({
      code: 'too_many_requests_in_flight',
      waitMs: IN_FLIGHT_RETRY_MS,
      message: `Too many requests in flight: at most ${inFlight.limit} at once ${poolWords(plan, inFlight.pool)}. Send the next one when one of them has finished.`,
    });
  }
  // The quantity with the longest wait is the one that really holds the caller back.
  let worst = shortfalls[0];
  for (const s of shortfalls) if (worst === undefined || s.waitMs > worst.waitMs) worst = s;
  if (worst === undefined) throw new Error('rejection() called for counts that admit the request');
  return new GatewayError(worst.code, worst.message, {
    retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
    headers: limitHeaders(plan, counts),
    // A daily cap frees hours from now: the official SDK would sleep that long (CLIENTS.md).
    ...(worst.code === 'daily_cap_exceeded' ? { shouldRetry: false } : {}),
  });
}
