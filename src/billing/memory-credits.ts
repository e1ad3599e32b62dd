/**
 * Credit holds in this process's memory: exact for one gateway instance, and costs a map lookup.
 * Each account's balance is read from the store once, then kept current by this instance's own
 * charges and by `balanceMoved` (admin top-ups), since with one instance nothing else moves it.
 */
import type { Store } from '../storage/types.js';
import { insufficientQuota } from './insufficient-quota.js';
import type { CreditGate, CreditHold } from './types.js';

interface AccountCredit {
  balance: number;
  held: number;
}

class MemoryHold implements CreditHold {
  readonly inStore = false;
  private open = true;

  constructor(
    private readonly credit: AccountCredit,
    readonly accountId: string,
    readonly amountMicros: number,
  ) {}

  end(chargedMicros: number): void {
    if (!this.open) return;
    this.open = false;
    this.credit.held -= this.amountMicros;
    this.credit.balance -= chargedMicros;
  }
}

export class MemoryCreditGate implements CreditGate {
  private readonly accounts = new Map<string, AccountCredit>();
  private readonly loading = new Map<string, Promise<AccountCredit>>();
  /**
   * Accounts whose balance moved while their first read was in flight: that read may have been
   * taken before the move or after it, so it is taken again rather than trusted (a top-up would
   * otherwise be lost, or counted twice, until the next restart).
   */
  private readonly movedWhileLoading = new Set<string>();

  constructor(private readonly store: Store) {}

  hold(accountId: string, _requestId: string, amountMicros: number): CreditHold | Promise<CreditHold> {
    const credit = this.accounts.get(accountId);
    if (credit !== undefined) return this.take(credit, accountId, amountMicros);
    return this.load(accountId).then((loaded) => this.take(loaded, accountId, amountMicros));
  }

  private take(credit: AccountCredit, accountId: string, amountMicros: number): CreditHold {
    if (credit.balance - credit.held < amountMicros) throw insufficientQuota(accountId, credit.balance, credit.held, amountMicros);
    credit.held += amountMicros;
    return new MemoryHold(credit, accountId, amountMicros);
  }

  private load(accountId: string): Promise<AccountCredit> {
    let pending = this.loading.get(accountId);
    if (pending === undefined) {
      pending = this.readBalance(accountId)
        .then((account) => {
          // Another load may have finished first; keep the one already in use.
          let credit = this.accounts.get(accountId);
          if (credit === undefined) {
            credit = { balance: account?.balanceMicros ?? 0, held: 0 };
            this.accounts.set(accountId, credit);
          }
          return credit;
        })
        .finally(() => this.loading.delete(accountId));
      this.loading.set(accountId, pending);
    }
    return pending;
  }

  /** The account as stored, read again for as long as its balance moves during the read. */
  private async readBalance(accountId: string): Promise<{ balanceMicros: number } | undefined> {
    for (;;) {
      this.movedWhileLoading.delete(accountId);
      const account = await this.store.getAccount(accountId);
      if (!this.movedWhileLoading.has(accountId)) return account;
    }
  }

  balanceMoved(accountId: string, deltaMicros: number): void {
    const credit = this.accounts.get(accountId);
    if (credit !== undefined) credit.balance += deltaMicros;
    else if (this.loading.has(accountId)) this.movedWhileLoading.add(accountId);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
