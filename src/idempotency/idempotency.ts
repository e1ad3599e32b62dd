/**
 * Idempotency-Key (spec 4, rule 2): the first request with a key runs and its outcome is
 * recorded; an identical resend gets the recorded response back; a resend while the first still
 * runs, or with another body, is a 409. A request that ended with nothing to replay (refused
 * before it ran, or a retryable failure) leaves a binding instead: an identical resend runs again,
 * another body is still a 409. Finished records and bindings live in the store (they must outlive
 * a restart); claims of running requests live in the configured claims backend (atomic across
 * instances when shared). Expired records are swept.
 */
import type { Logger } from 'pino';
import { GatewayError, toGatewayError } from '../errors/index.js';
import { BINDING_STATUS, type IdempotencyRecord, type Store } from '../storage/types.js';
import type { IdempotencyClaims } from './claims.js';
import { bindingRecordId, idempotencyRecordId } from './fingerprint.js';
import { IdempotentCall, type PendingRecord } from './idempotent-call.js';
import { PeriodicTask } from '../util/periodic-task.js';

export type IdempotencyStart = { readonly kind: 'execute'; readonly call: IdempotentCall } | { readonly kind: 'replay'; readonly record: IdempotencyRecord };

export interface IdempotencySettings {
  /** How long a finished request's record is replayed. */
  readonly lifetimeMs: number;
  /** How often expired records are deleted. */
  readonly sweepEveryMs: number;
}

const SWEEP_BATCH = 1_000;
/** Seconds a resend is told to wait for a request still running. */
const IN_USE_RETRY_AFTER_S = 1;

export class Idempotency {
  private readonly sweeper: PeriodicTask;

  constructor(
    private readonly store: Store,
    private readonly claims: IdempotencyClaims,
    private readonly settings: IdempotencySettings,
    private readonly logger: Logger,
  ) {
    this.sweeper = new PeriodicTask(() => this.deleteExpired(), settings.sweepEveryMs, (err) =>
      this.logger.warn({ err }, 'could not sweep expired idempotency records; trying again later'),
    );
  }

  /**
   * Decides what a request with a key does: run (under a claim the caller must `finish`), or
   * replay a recorded response; throws the 409s. Nothing is claimed when it throws or replays.
   */
  async start(accountId: string, key: string, fingerprint: string, requestId: string): Promise<IdempotencyStart> {
    const id = idempotencyRecordId(accountId, key);
    const recorded = await this.lookup(id);
    if (recorded !== undefined) return replayOf(recorded, fingerprint);
    await this.checkBinding(id, fingerprint);
    const claim = await this.claims.claim(id, { fingerprint, requestId });
    if (!claim.claimed) {
      if (claim.holder.fingerprint !== fingerprint) throw reused(claim.holder.requestId);
      throw new GatewayError('idempotency_key_in_use', `A request with this Idempotency-Key (${claim.holder.requestId}) is still running. Retry after ${IN_USE_RETRY_AFTER_S} second(s) to get its result.`, {
        param: 'Idempotency-Key',
        retryAfterSeconds: IN_USE_RETRY_AFTER_S,
        // Unlike other 409s, waiting helps: the retry gets the recorded response.
        shouldRetry: true,
      });
    }
    // It may have finished between the lookup and the claim (its holder gave the claim back),
    // leaving a record or a binding.
    let finished: IdempotencyRecord | undefined;
    try {
      finished = await this.lookup(id);
      if (finished === undefined) await this.checkBinding(id, fingerprint);
    } catch (err) {
      await this.claims.release(id, requestId);
      throw err;
    }
    if (finished !== undefined) {
      await this.claims.release(id, requestId);
      return replayOf(finished, fingerprint);
    }
    return { kind: 'execute', call: new IdempotentCall(this.claims, id, accountId, fingerprint, requestId, this.settings.lifetimeMs, (binding) => this.commit(binding)) };
  }

  /**
   * Commits the record of a request that charges nothing (an upload, a cancel), so has no
   * settlement to carry it. A record that cannot be committed is logged, not thrown: the request
   * itself succeeded, and a resend will run it again.
   */
  async commit(pending: PendingRecord | null): Promise<void> {
    if (pending === null) return;
    const { record } = pending;
    try {
      await this.store.commitSettlements([{ requestId: record.requestId, charge: null, releaseReservation: false, usage: null, idempotency: record }]);
    } catch (err) {
      this.logger.error({ err, request_id: record.requestId }, 'could not record the outcome of a request with an Idempotency-Key; a resend will run it again');
    } finally {
      pending.settled();
    }
  }

  /** 409 when the key is bound to another request that left nothing to replay. */
  private async checkBinding(id: string, fingerprint: string): Promise<void> {
    const binding = await this.lookup(bindingRecordId(id));
    if (binding !== undefined && binding.status === BINDING_STATUS && binding.fingerprint !== fingerprint) throw reused(binding.requestId);
  }

  private async lookup(id: string): Promise<IdempotencyRecord | undefined> {
    try {
      return await this.store.getIdempotencyRecord(id, Date.now());
    } catch (err) {
      throw new GatewayError('idempotency_unavailable', 'The store of idempotency records did not answer, so a request with an Idempotency-Key cannot be run safely now.', {
        cause: toGatewayError(err),
        retryAfterSeconds: 1,
      });
    }
  }

  /** Deletes expired records, a batch at a time. */
  sweep(): Promise<void> {
    return this.sweeper.run();
  }

  private async deleteExpired(): Promise<void> {
    let deleted: number;
    do deleted = await this.store.deleteExpiredIdempotencyRecords(Date.now(), SWEEP_BATCH);
    while (deleted === SWEEP_BATCH);
  }

  async close(): Promise<void> {
    await this.sweeper.stop();
    await this.claims.close();
  }
}

function replayOf(record: IdempotencyRecord, fingerprint: string): IdempotencyStart {
  if (record.fingerprint !== fingerprint) throw reused(record.requestId);
  return { kind: 'replay', record };
}

function reused(requestId: string): GatewayError {
  return new GatewayError(
    'idempotency_key_reused',
    `This Idempotency-Key was already used by request ${requestId} with a different method, path or body. Use a new key, or resend the identical request.`,
    { param: 'Idempotency-Key' },
  );
}
