import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/index.js';
import { noteRouteFault } from './failover.js';
import { RouteHealth } from './route-health.js';

const SETTINGS = { consecutiveFailures: 2, failureRate: 0.5, minRequests: 10, windowMs: 10_000, cooldownMs: 5_000, maxRetryAfterMs: 60_000 };

describe('noteRouteFault', () => {
  it('cools a route down for a Retry-After, and counts a pause of nothing as a plain failure', () => {
    const now = 1_000_000;
    const cooled = new RouteHealth('a/m', SETTINGS, () => now);
    noteRouteFault(cooled, new GatewayError('upstream_unavailable', 'busy', { retryAfterSeconds: 7 }));
    expect(cooled.availableAt()).toBe(now + 7_000);
    expect(cooled.state).toBe('closed');

    const zero = new RouteHealth('b/m', SETTINGS, () => now);
    for (let i = 0; i < 2; i++) noteRouteFault(zero, new GatewayError('upstream_unavailable', 'busy', { retryAfterSeconds: 0 }));
    expect(zero.state).toBe('open');
  });
});
