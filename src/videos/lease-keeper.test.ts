/** When a poll's lease is given up: on fake timers, a lease of 300 ms renewed every 100 ms. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { GatewayError } from '../errors/index.js';
import { keepLease } from './lease-keeper.js';

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});

afterEach(() => {
  vi.useRealTimers();
});

function keep(renew: () => Promise<boolean>): { lost: () => GatewayError | undefined; stop: () => void } {
  let reason: GatewayError | undefined;
  const stop = keepLease(Date.now() + 300, 300, { renew, lost: (why) => (reason = why), renewalFailed: () => undefined });
  return { lost: () => reason, stop };
}

describe('keepLease', () => {
  it('keeps a lease the store renews for as long as it runs', async () => {
    const renew = vi.fn(() => Promise.resolve(true));
    const lease = keep(renew);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(lease.lost()).toBeUndefined();
    expect(renew).toHaveBeenCalledTimes(30);
    lease.stop();
  });

  it('gives the lease up when a renewal finds it gone', async () => {
    const lease = keep(() => Promise.resolve(false));
    await vi.advanceTimersByTimeAsync(100);
    expect(lease.lost()?.code).toBe('video_not_found');
  });

  it('gives the lease up after two failed renewals, before it runs out; not after one', async () => {
    let fails = 1;
    const lease = keep(() => (fails-- > 0 ? Promise.reject(new Error('store unreachable')) : Promise.resolve(true)));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(lease.lost()).toBeUndefined();
    lease.stop();

    const leasedAt = Date.now();
    const failing = keep(() => Promise.reject(new Error('store unreachable')));
    await vi.advanceTimersByTimeAsync(199);
    expect(failing.lost()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(failing.lost()?.code).toBe('store_unavailable');
    expect(Date.now() - leasedAt).toBeLessThan(300);
  });

  it('gives the lease up half a renewal interval before it ends when renewals go unanswered', async () => {
    const lease = keep(() => new Promise<boolean>(() => undefined));
    await vi.advanceTimersByTimeAsync(249);
    expect(lease.lost()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(lease.lost()?.code).toBe('store_unavailable');
  });

  it('reports nothing once stopped', async () => {
    const lease = keep(() => Promise.resolve(false));
    lease.stop();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(lease.lost()).toBeUndefined();
  });
});

describe('keepLease, a lease not a multiple of three intervals', () => {
  function keepLong(renew: () => Promise<boolean>): { lostAt: () => number | undefined; stop: () => void } {
    let at: number | undefined;
    const stop = keepLease(Date.now() + 10_000, 10_000, { renew, lost: () => (at = Date.now()), renewalFailed: () => undefined });
    return { lostAt: () => at, stop };
  }

  it('stops before the lease ends when renewals hang, though no renewal tick falls just before its end', async () => {
    const lease = keepLong(() => new Promise<boolean>(() => undefined));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(lease.lostAt()).toBeLessThan(10_000);
    lease.stop();
  });

  it('stops after two failed renewals', async () => {
    let renewals = 0;
    const lease = keepLong(() => {
      renewals++;
      return Promise.reject(new Error('store unreachable'));
    });
    await vi.advanceTimersByTimeAsync(6_700);
    expect({ lostAt: lease.lostAt(), renewals }).toEqual({ lostAt: 6_666, renewals: 2 });
    lease.stop();
  });

  it('keeps a lease renewed in time, its deadline moved with each renewal', async () => {
    const lease = keepLong(() => Promise.resolve(true));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(lease.lostAt()).toBeUndefined();
    lease.stop();
  });
});

describe('keepLease, a slow store', () => {
  it('never has two renewals under way, and keeps the lease when each takes longer than the time between two', async () => {
    let underWay = 0;
    let mostAtOnce = 0;
    let renewals = 0;
    let lost: GatewayError | undefined;
    const stop = keepLease(Date.now() + 300, 300, {
      // Each renewal takes 120 ms, longer than the 100 ms between two.
      renew: () => {
        renewals++;
        mostAtOnce = Math.max(mostAtOnce, ++underWay);
        return new Promise((resolve) =>
          setTimeout(() => {
            underWay--;
            resolve(true);
          }, 120),
        );
      },
      lost: (why) => (lost = why),
      renewalFailed: () => undefined,
    });
    await vi.advanceTimersByTimeAsync(3_000);
    stop();
    expect({ mostAtOnce, lost: lost?.code }).toEqual({ mostAtOnce: 1, lost: undefined });
    expect(renewals).toBeGreaterThanOrEqual(20);
  });
});
