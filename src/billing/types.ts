/**
 * Credits at admission (spec 7, status 402): a request is admitted only if its account's balance,
 * less what its other requests in flight hold, covers the request's worst-case cost. The hold is
 * turned into a charge for what was really used when the request ends (see settlement-writer.ts).
 */

/** Credit held for one request in flight. */
export interface CreditHold {
  readonly accountId: string;
  readonly amountMicros: number;
  /** Whether the hold lives in the store (released by the settlement's commit) or in memory. */
  readonly inStore: boolean;
  /** Gives the held amount back and applies the charge; only the first call counts. */
  end(chargedMicros: number): void;
}

export interface CreditGate {
  /** Holds the amount, or throws 402 `insufficient_quota` saying the balance and the cost. */
  hold(accountId: string, requestId: string, amountMicros: number): CreditHold | Promise<CreditHold>;
  /**
   * Tells the gate an account's balance moved outside a request (a top-up or adjustment through
   * the admin API). A movement, not the new balance: a gate that keeps balances in memory may
   * already have applied charges the store has not committed yet, which a new figure would undo.
   */
  balanceMoved(accountId: string, deltaMicros: number): void;
  close(): Promise<void>;
}
