/**
 * Credit holds in the store, for several instances sharing one PostgreSQL: one conditional UPDATE
 * reserves atomically across instances, with no lock held during the upstream call (see
 * SqlStore.reserveCredits), and the settlement's commit releases it. Reservations of an instance
 * that died are released by a sweep once they expire.
 */
import type { Logger } from 'pino';
import type { Store } from '../storage/types.js';
import { insufficientQuota } from './insufficient-quota.js';
import { storeUnavailable } from '../storage/store-unavailable.js';
import type { CreditGate, CreditHold } from './types.js';

const SWEEP_EVERY_MS = 30_000;

class StoreHold implements CreditHold {
  readonly inStore = true;

  constructor(
    readonly accountId: string,
    readonly amountMicros: number,
  ) {}

  /** Released by the settlement's commit, in the same transaction as the charge. */
  end(): void {}
}

export class StoreCreditGate implements CreditGate {
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly store: Store,
    /** How long a reservation outlives the longest request before a sweep may release it. */
    private readonly lifetimeMs: number,
    logger: Logger,
  ) {
    this.sweeper = setInterval(() => {
      this.store.releaseExpiredReservations(Date.now()).catch((err: unknown) => logger.warn({ err }, 'could not release expired credit reservations'));
    }, SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  async hold(accountId: string, requestId: string, amountMicros: number): Promise<CreditHold> {
    const result = await this.store.reserveCredits({ requestId, accountId, amountMicros, expiresAt: Date.now() + this.lifetimeMs }).catch((err: unknown) => {
      throw storeUnavailable(err);
    });
    if (!result.reserved) throw insufficientQuota(accountId, result.balanceMicros, result.reservedMicros, amountMicros);
    return new StoreHold(accountId, amountMicros);
  }

  balanceMoved(): void {
    // The store is the only place balances live in this mode.
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    return Promise.resolve();
  }
}
