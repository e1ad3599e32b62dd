import { describe, expect, it } from 'vitest';
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
