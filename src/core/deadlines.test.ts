import { describe, expect, it, vi } from 'vitest';
import { setTimeout as wait } from 'node:timers/promises';
import { GatewayError } from '../errors/index.js';
import { Cancellation } from '../util/cancellation.js';
import { AttemptCancellation, CallDeadlines } from './deadlines.js';

const settings = { budgetMs: 10_000, upstreamTimeoutMs: 5_000, idleTimeoutMs: 100 };

function streaming(): { deadlines: CallDeadlines; attempt: AttemptCancellation } {
  const request = new Cancellation();
  const deadlines = new CallDeadlines(request, settings, settings.budgetMs);
  const attempt = new AttemptCancellation(request);
  deadlines.startAttempt(attempt);
  deadlines.streamStarted();
  return { deadlines, attempt };
}

describe('CallDeadlines while streaming', () => {
  it('does not time the upstream out while a chunk is still being relayed to a slow caller', async () => {
    const { deadlines, attempt } = streaming();
    try {
      // The caller takes three idle periods to read the first chunk: the upstream was not asked for more.
      await wait(300);
      expect(attempt.aborted).toBe(false);
      deadlines.awaitingUpstream();
      await wait(50);
      deadlines.progress();
      await wait(300);
      expect(attempt.aborted).toBe(false);
    } finally {
      deadlines.clear();
    }
  });

  it('times the upstream out when it stays silent after the next chunk was asked for', async () => {
    const { deadlines, attempt } = streaming();
    try {
      deadlines.awaitingUpstream();
      await wait(400);
      expect(attempt.aborted).toBe(true);
      expect(attempt.reason).toBeInstanceOf(GatewayError);
      expect((attempt.reason as GatewayError).code).toBe('upstream_timeout');
    } finally {
      deadlines.clear();
    }
  });

  it('re-arms the idle timer that ran out during a relay once the next chunk is asked for', async () => {
    const { deadlines, attempt } = streaming();
    try {
      await wait(300);
      deadlines.awaitingUpstream();
      await wait(400);
      expect((attempt.reason as GatewayError | undefined)?.code).toBe('upstream_timeout');
    } finally {
      deadlines.clear();
    }
  });
});

describe('CallDeadlines with one timer', () => {
  it('ends a stream at its budget although chunks keep coming, the budget being longer than the idle timeout', async () => {
    const request = new Cancellation();
    const deadlines = new CallDeadlines(request, { budgetMs: 250, upstreamTimeoutMs: 5_000, idleTimeoutMs: 100 }, 250);
    const attempt = new AttemptCancellation(request);
    const started = performance.now();
    deadlines.startAttempt(attempt);
    deadlines.streamStarted();
    try {
      while (!request.aborted && performance.now() - started < 1_000) {
        deadlines.awaitingUpstream();
        await wait(20);
        deadlines.progress();
      }
      expect((request.reason as GatewayError | undefined)?.code).toBe('generation_timeout');
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(245);
      expect(took).toBeLessThan(400);
    } finally {
      deadlines.clear();
    }
  });

  it('times out an upstream that never answers at the upstream timeout, not at the shorter idle timeout', async () => {
    const request = new Cancellation();
    const deadlines = new CallDeadlines(request, { budgetMs: 10_000, upstreamTimeoutMs: 250, idleTimeoutMs: 100 }, 10_000);
    const attempt = new AttemptCancellation(request);
    deadlines.startAttempt(attempt);
    try {
      await wait(200);
      expect(attempt.aborted).toBe(false);
      await wait(150);
      expect((attempt.reason as GatewayError | undefined)?.code).toBe('upstream_timeout');
      expect((attempt.reason as GatewayError).message).toContain('did not answer within 250 ms');
      expect(request.aborted).toBe(false);
    } finally {
      deadlines.clear();
    }
  });

  it('sets a single timer for a stream whose deadlines are all far off', () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    const request = new Cancellation();
    const deadlines = new CallDeadlines(request, { budgetMs: 600_000, upstreamTimeoutMs: 120_000, idleTimeoutMs: 60_000 }, 600_000);
    try {
      deadlines.startAttempt(new AttemptCancellation(request));
      deadlines.streamStarted();
      for (let i = 0; i < 10; i++) {
        deadlines.awaitingUpstream();
        deadlines.progress();
      }
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      deadlines.clear();
      spy.mockRestore();
    }
  });
});
