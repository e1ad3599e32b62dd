/**
 * One request running under an Idempotency-Key it has claimed. The pipeline asks it for the
 * record of the request's outcome and commits that record in the same transaction as the
 * request's charge, so that a response is replayable exactly when it was charged. The claim is
 * given back once that commit is durable (or at once when nothing is recorded), never earlier:
 * until then a resend is told the request is still running.
 */
import type { IdempotencyRecord } from '../storage/types.js';
import type { IdempotencyClaims } from './claims.js';

/**
 * Outcomes a resend should not get back, but run again: limits and upstream trouble are
 * transient, and a resend may reach another provider (spec 1). Everything else, once execution
 * began, is the request's outcome, 4xx and 500 included (as Stripe does).
 */
const NOT_RECORDED = new Set([429, 502, 503, 504]);

/** A record on its way to the store, with the hook the store calls once it is durable. */
export interface PendingRecord {
  readonly record: IdempotencyRecord;
  readonly committed: () => void;
}

export class IdempotentCall {
  private recording: Promise<void> | null = null;
  private finished: Promise<void> | null = null;

  constructor(
    private readonly claims: IdempotencyClaims,
    readonly id: string,
    readonly accountId: string,
    readonly fingerprint: string,
    readonly requestId: string,
    private readonly lifetimeMs: number,
  ) {}

  /**
   * The record of this outcome, or null when the rule says a resend runs again (or an outcome was
   * already recorded). `headers` are the response's own; per-request ones are dropped here.
   * `outcomeStatus` decides: for a stream that ended in an error frame it is the error's status,
   * while `status` (200) is what the replay answers.
   */
  recordFor(status: number, headers: Readonly<Record<string, string>>, body: string | Buffer, outcomeStatus = status): PendingRecord | null {
    if (this.recording !== null || NOT_RECORDED.has(outcomeStatus)) return null;
    let committed!: () => void;
    this.recording = new Promise((resolve) => (committed = resolve));
    const now = Date.now();
    return {
      record: {
        id: this.id,
        accountId: this.accountId,
        fingerprint: this.fingerprint,
        requestId: this.requestId,
        status,
        headers: replayableHeaders(headers),
        body: typeof body === 'string' ? Buffer.from(body) : body,
        createdAt: now,
        expiresAt: now + this.lifetimeMs,
      },
      committed,
    };
  }

  /** Ends the call: gives the claim back once the outcome's record, if any, is durable. Safe to call twice. */
  finish(): Promise<void> {
    this.finished ??= (async () => {
      if (this.recording !== null) await this.recording;
      await this.claims.release(this.id, this.requestId);
    })();
    return this.finished;
  }
}

/** The headers a replay repeats: those describing the response, not the request that made it. */
function replayableHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === 'x-request-id' || lower.startsWith('x-ratelimit-') || lower === 'connection' || lower === 'content-length' || lower === 'transfer-encoding') continue;
    kept[lower] = value;
  }
  return kept;
}
