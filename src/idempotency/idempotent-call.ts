/**
 * One request running under an Idempotency-Key it has claimed. The pipeline asks it for the
 * record of the request's outcome and commits that record in the same transaction as the
 * request's charge, so that a response is replayable exactly when it was charged. The claim is
 * given back once that commit is durable (or at once when nothing is recorded), never earlier:
 * until then a resend is told the request is still running.
 */
import { envelopeJson, errorHeaders, type GatewayError } from '../errors/index.js';
import { BINDING_STATUS, type IdempotencyRecord } from '../storage/types.js';
import type { IdempotencyClaims } from './claims.js';
import { bindingRecordId } from './fingerprint.js';

/**
 * Outcomes a resend should not get back, but run again: the statuses the specification calls
 * retryable (429, 500, 502, 503, 504) and 408, whose remedy is to retry. They are answered with
 * `x-should-retry: true`, and resending the same key is the accepted way to retry (spec 4), so a
 * recorded one would send the client round to the same failure for the key's lifetime; a resend
 * may also reach another provider. Everything else, once execution began, is the request's
 * outcome, 4xx included (as Stripe does).
 */
const NOT_RECORDED = new Set([408, 429, 500, 502, 503, 504]);

/**
 * Refusals the gateway makes before anything reaches a provider (validation, an adapter that cannot
 * translate a value, a lookup that found nothing, a capability missing, a body over its limit):
 * nothing executed, so no outcome is recorded and the identical request runs again when resent.
 */
const REFUSAL_STATUSES = new Set([400, 401, 402, 403, 404, 413, 422, 501]);
/** The one refusal among them that a provider made after it got the request: executed, so recorded. */
const UPSTREAM_REFUSAL = 'upstream_rejected_request';

/** A record on its way to the store, with the hook called once its fate is known. */
export interface PendingRecord {
  readonly record: IdempotencyRecord;
  /** Called once the record is committed, or once it never will be (its settlement failed). */
  readonly settled: () => void;
}

/** How the request ended, when it is not what the recorded status says (a stream's error frame). */
export interface OutcomeOf {
  readonly status: number;
  readonly code?: string;
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
    /** Commits a binding (never throws): the key stays bound to this request when it recorded nothing. */
    private readonly bind: (binding: PendingRecord) => Promise<void>,
  ) {}

  /**
   * The record of this outcome, or null when the rule says a resend runs again (or an outcome was
   * already recorded). `headers` are the response's own; per-request ones are dropped here.
   * `outcome` decides: for a stream that ended in an error frame it is the error's status and
   * code, while `status` (200) is what the replay answers.
   */
  recordFor(status: number, headers: Readonly<Record<string, string>>, body: string | Buffer, outcome: OutcomeOf = { status }): PendingRecord | null {
    if (this.recording !== null || NOT_RECORDED.has(outcome.status)) return null;
    if (REFUSAL_STATUSES.has(outcome.status) && outcome.code !== UPSTREAM_REFUSAL) return null;
    let settled!: () => void;
    this.recording = new Promise((resolve) => (settled = resolve));
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
      settled,
    };
  }

  /** The record of an error answered as such (its envelope and headers), under the same rule. */
  recordError(error: GatewayError): PendingRecord | null {
    return this.recordFor(error.status, errorHeaders(error), envelopeJson(error), { status: error.status, code: error.code });
  }

  /**
   * Ends the call; the caller answers once it resolves. A recorded outcome gives the claim back
   * once its record is durable, which the answer does not wait for (a resend meanwhile is told to
   * come back). When nothing was recorded, a binding of the key to this request's fingerprint is
   * committed (spec 4: the same key with another body is a 409, whatever became of the first) and
   * the claim given back before the answer, so that the caller's immediate resend runs. Safe to
   * call twice.
   */
  finish(): Promise<void> {
    if (this.finished === null) {
      const recording = this.recording;
      if (recording !== null) {
        void recording.then(() => this.claims.release(this.id, this.requestId));
        this.finished = Promise.resolve();
      } else {
        this.finished = this.bind(this.binding()).then(() => this.claims.release(this.id, this.requestId));
      }
    }
    return this.finished;
  }

  private binding(): PendingRecord {
    const now = Date.now();
    const record: IdempotencyRecord = {
      id: bindingRecordId(this.id), accountId: this.accountId, fingerprint: this.fingerprint, requestId: this.requestId,
      status: BINDING_STATUS, headers: {}, body: Buffer.alloc(0), createdAt: now, expiresAt: now + this.lifetimeMs,
    };
    return { record, settled: () => undefined };
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
