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

  it('gives the lease up when it ends with renewals unanswered', async () => {
    const lease = keep(() => new Promise<boolean>(() => undefined));
    await vi.advanceTimersByTimeAsync(299);
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
