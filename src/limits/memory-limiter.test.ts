import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/index.js';
import { MemoryLimiter } from './memory-limiter.js';
import { LimitPlans } from './plan.js';
import type { LimitsConfig } from '../config/schema.js';
import type { Admission } from './types.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
let now = T0;
let limiter: MemoryLimiter;

function plansWith(limits: Partial<LimitsConfig>, modelLimits: Array<{ models: string[]; limits: Partial<LimitsConfig> }> = []): LimitPlans {
  const fill = (l: Partial<LimitsConfig>): LimitsConfig => ({ daily: {}, ...l });
  return new LimitPlans({ t: { models: ['*'], endpoints: ['*'], limits: fill(limits), model_limits: modelLimits.map((g) => ({ models: g.models, limits: fill(g.limits) })) } });
}

function setup(limits: Partial<LimitsConfig>, modelLimits: Array<{ models: string[]; limits: Partial<LimitsConfig> }> = []) {
  now = T0;
  limiter = new MemoryLimiter(() => now);
  const plans = plansWith(limits, modelLimits);
  let n = 0;
  const admit = (tokens = 0, model = 'm'): Admission => limiter.admit({ keyId: 'k', requestId: `r${n++}`, plan: plans.planFor('t', model, 'chat'), tokens });
  const refusal = (tokens = 0, model = 'm'): GatewayError => {
    try {
      admit(tokens, model);
    } catch (err) {
      if (err instanceof GatewayError) return err;
      throw err;
    }
    throw new Error('expected a refusal');
  };
  return { admit, refusal, plans };
}

afterEach(() => limiter.close());

describe('MemoryLimiter', () => {
  it('admits exactly the per-minute number, with the headers counting down', () => {
    const { admit, refusal } = setup({ requests_per_minute: 3 });
    expect(admit().headers).toEqual({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': String(T0 / 1000 + 60) });
    admit();
    expect(admit().headers['x-ratelimit-remaining']).toBe('0');
    const err = refusal();
    expect(err.status).toBe(429);
    expect(err.code).toBe('requests_per_minute_exceeded');
    expect(err.message).toContain('3 requests per minute');
    // Never over 60 s: LangChain retries a 429 only when told to wait at most that long.
    expect(err.retryAfterSeconds).toBe(60);
    expect(err.headers).toMatchObject({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '0' });
  });

  it('admits a client that waits Retry-After', () => {
    const { admit, refusal } = setup({ requests_per_minute: 2 });
    admit();
    now += 10_000;
    admit();
    now += 5_000;
    const wait = refusal().retryAfterSeconds as number;
    now += wait * 1000;
    expect(() => admit()).not.toThrow();
  });

  it('keeps a client that hammers limited: refused requests count too', () => {
    const { admit, refusal } = setup({ requests_per_minute: 2 });
    admit();
    admit();
    now += 30_000;
    const first = refusal().retryAfterSeconds as number;
    for (let i = 0; i < 5; i++) refusal();
    // At the first Retry-After the two admitted requests have left, but the refused ones have not.
    now += first * 1000;
    const later = refusal();
    expect(later.code).toBe('requests_per_minute_exceeded');
    expect(later.retryAfterSeconds).toBeGreaterThan(20);
  });

  it('reserves tokens at admission and settles to what was used', () => {
    const { admit, refusal } = setup({ tokens_per_minute: 1000 });
    const a = admit(600);
    expect(a.headers).toMatchObject({ 'x-ratelimit-limit-tokens': '1000', 'x-ratelimit-remaining-tokens': '400' });
    const err = refusal(500);
    expect(err.code).toBe('tokens_per_minute_exceeded');
    expect(err.message).toContain('up to 500');
    a.settle({ tokens: 100, failed: false });
    expect(admit(500).headers['x-ratelimit-remaining-tokens']).toBe('400');
  });

  it('keeps the reservation when the usage is unknown, and settles once only', () => {
    const { admit } = setup({ tokens_per_minute: 1000, max_in_flight: 1 });
    const a = admit(600);
    a.settle({ tokens: null, failed: false });
    a.settle({ tokens: 0, failed: false });
    expect(admit(100).headers['x-ratelimit-remaining-tokens']).toBe('300');
  });

  it('keeps the window usable when an upstream reports an absurd count: Infinity is bounded, a negative one ignored', () => {
    const { admit, refusal } = setup({ tokens_per_minute: 1000 });
    admit(100).settle({ tokens: Infinity, failed: false });
    admit(0).settle({ tokens: -5, failed: false });
    expect(refusal(10).code).toBe('tokens_per_minute_exceeded');
    // A minute later the window is clear again, not NaN.
    now += 61_000;
    expect(admit(500).headers['x-ratelimit-remaining-tokens']).toBe('500');
  });

  it('never refuses a request that reserves no tokens (a replay), and still gives it the token headers', () => {
    const { admit } = setup({ tokens_per_minute: 1000 });
    admit(900).settle({ tokens: 1500, failed: false });
    expect(admit(0).headers).toMatchObject({ 'x-ratelimit-limit-tokens': '1000', 'x-ratelimit-remaining-tokens': '0' });
  });

  it('caps a modality per UTC day, resets at midnight, and gives back failed requests', () => {
    const { admit, refusal } = setup({ daily: { chat: 2 } });
    admit();
    admit().settle({ tokens: 0, failed: true });
    admit();
    const err = refusal();
    expect(err.code).toBe('daily_cap_exceeded');
    expect(err.shouldRetry).toBe(false);
    expect(err.retryAfterSeconds).toBe(12 * 3600);
    now = Date.UTC(2026, 10, 23, 0, 0, 1);
    expect(() => admit()).not.toThrow();
  });

  it('holds an in-flight slot until settled, exactly once', () => {
    const { admit, refusal } = setup({ max_in_flight: 2 });
    const a = admit();
    admit();
    const err = refusal();
    expect(err.code).toBe('too_many_requests_in_flight');
    expect(err.retryAfterSeconds).toBe(1);
    a.settle({ tokens: null, failed: false });
    a.settle({ tokens: null, failed: false });
    admit();
    expect(refusal().code).toBe('too_many_requests_in_flight');
  });

  it('names the quantity with the longest wait and waits for all of them', () => {
    const { admit, refusal } = setup({ requests_per_minute: 1, max_in_flight: 1 });
    admit();
    const err = refusal();
    expect(err.code).toBe('requests_per_minute_exceeded');
    expect(err.retryAfterSeconds).toBe(60);
  });

  it('counts a model group apart, sharing what the group does not set', () => {
    const { admit, refusal } = setup({ requests_per_minute: 10, max_in_flight: 2 }, [{ models: ['big-*'], limits: { requests_per_minute: 1 } }]);
    admit(0, 'big-1');
    expect(refusal(0, 'big-2').message).toContain('model group of "big-2"');
    admit(0, 'small');
    // The group shares the tier's in-flight slots: two are taken.
    expect(refusal(0, 'small').code).toBe('too_many_requests_in_flight');
  });

  it('reports the state without counting', () => {
    const { admit, plans } = setup({ requests_per_minute: 5, tokens_per_minute: 100, daily: { chat: 9 }, max_in_flight: 3 });
    admit(40);
    const plan = plans.planFor('t', 'm', 'chat');
    const view = limiter.peek('k', plan);
    expect(view.snapshot).toEqual({
      requests_per_minute: { limit: 5, remaining: 4, reset: T0 / 1000 + 60 },
      tokens_per_minute: { limit: 100, remaining: 60, reset: T0 / 1000 + 60 },
      daily: { limit: 9, remaining: 8, reset: Date.UTC(2026, 10, 23) / 1000 },
      in_flight: { limit: 3, remaining: 2 },
    });
    expect(limiter.peek('k', plan).snapshot.requests_per_minute?.remaining).toBe(4);
  });
});
