/**
 * A claim says "this Idempotency-Key is being executed by that request". It is taken atomically
 * before anything runs, so two requests with one key never both execute, and given back when the
 * request ends: by then its response is recorded (see idempotency.ts) or it is not to be.
 */

export interface Claim {
  /** The request's fingerprint: a resend with another body is told apart from an identical one. */
  readonly fingerprint: string;
  readonly requestId: string;
}

export type ClaimResult = { readonly claimed: true } | { readonly claimed: false; readonly holder: Claim };

export interface IdempotencyClaims {
  /** Claims the key for `claim.requestId`, or reports the request that holds it. Atomic across instances when shared. */
  claim(id: string, claim: Claim): ClaimResult | Promise<ClaimResult>;
  /** Gives the key back; only its holder's request id does. */
  release(id: string, requestId: string): void | Promise<void>;
  close(): Promise<void>;
}
