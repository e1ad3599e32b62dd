import { describe, expect, it } from 'vitest';
import { RouteHealth, type BreakerSettings } from './route-health.js';

const SETTINGS: BreakerSettings = { consecutiveFailures: 3, failureRate: 0.5, minRequests: 10, windowMs: 10_000, cooldownMs: 5_000, maxRetryAfterMs: 60_000 };

function health(settings: Partial<BreakerSettings> = {}) {
  let now = 1_000_000;
  const h = new RouteHealth('p/m', { ...SETTINGS, ...settings }, () => now);
  const attempt = (ok: boolean): boolean => {
    if (!h.acquire()) return false;
    if (ok) h.succeeded(10);
    else h.failed();
    h.release();
    return true;
  };
  return { h, attempt, advance: (ms: number) => (now += ms), now: () => now };
}

describe('RouteHealth', () => {
  it('opens after consecutive failures, refuses during the cool-down, then lets one probe through', () => {
    const { h, attempt, advance, now } = health();
    attempt(false);
    attempt(false);
    expect(h.state).toBe('closed');
    attempt(false);
    expect(h.state).toBe('open');
    expect(h.acquire()).toBe(false);
    expect(h.availableAt()).toBe(now() + 5_000);
    advance(5_000);
    expect(h.acquire()).toBe(true);
    expect(h.state).toBe('half_open');
    // One probe at a time.
    expect(h.acquire()).toBe(false);
    h.succeeded(12);
    h.release();
    expect(h.state).toBe('closed');
    expect(h.acquire()).toBe(true);
    h.release();
  });

  it('a failed probe opens the circuit again for a whole cool-down', () => {
    const { h, attempt, advance, now } = health();
    for (let i = 0; i < 3; i++) attempt(false);
    advance(5_000);
    expect(attempt(false)).toBe(true);
    expect(h.state).toBe('open');
    expect(h.availableAt()).toBe(now() + 5_000);
  });

  it('a streamed probe stays the only request until its stream ends, which decides the circuit', () => {
    const { h, attempt, advance } = health();
    for (let i = 0; i < 3; i++) attempt(false);
    advance(5_000);
    expect(h.acquire()).toBe(true);
    h.answered(12);
    // The first chunk arrived: still one probe at a time.
    expect(h.state).toBe('half_open');
    expect(h.acquire()).toBe(false);
    // The stream broke halfway: open for another cool-down.
    h.failed();
    h.release();
    expect(h.state).toBe('open');
    advance(5_000);
    expect(h.acquire()).toBe(true);
    h.answered(12);
    h.streamCompleted();
    h.release();
    expect(h.state).toBe('closed');
  });

  it('a success between failures resets the consecutive count', () => {
    const { h, attempt } = health();
    for (let i = 0; i < 10; i++) {
      attempt(false);
      attempt(false);
      attempt(true);
    }
    // 20 failures of 30 is a 67% rate over the window with enough requests: open.
    expect(h.state).toBe('open');
  });

  it('does not open on a failure rate below the threshold, nor on too few requests', () => {
    const { h, attempt } = health({ consecutiveFailures: 100 });
    for (let i = 0; i < 4; i++) {
      attempt(false);
      attempt(true);
      attempt(true);
    }
    expect(h.state).toBe('closed');
    const few = health({ consecutiveFailures: 100, minRequests: 10 });
    for (let i = 0; i < 4; i++) few.attempt(false);
    expect(few.h.state).toBe('closed');
  });

  it('cools down for the Retry-After an upstream asked for, capped', () => {
    const { h, advance, now } = health();
    h.coolDown(7);
    expect(h.acquire()).toBe(false);
    expect(h.availableAt()).toBe(now() + 7_000);
    advance(7_000);
    expect(h.acquire()).toBe(true);
    h.release();
    h.coolDown(3600);
    expect(h.availableAt()).toBe(now() + 60_000);
  });

  it('counts requests in flight and smooths the time to first byte', () => {
    const { h } = health();
    expect(h.acquire()).toBe(true);
    expect(h.acquire()).toBe(true);
    expect(h.inFlight).toBe(2);
    h.succeeded(100);
    h.succeeded(200);
    expect(h.latencyMs).toBeCloseTo(120);
    h.release();
    h.release();
    expect(h.inFlight).toBe(0);
  });
});
