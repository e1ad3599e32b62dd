/** Claims for one instance: a map in this process. They die with it, as do the requests they guard. */
import type { Claim, ClaimResult, IdempotencyClaims } from './claims.js';

export class MemoryClaims implements IdempotencyClaims {
  private readonly held = new Map<string, Claim>();

  claim(id: string, claim: Claim): ClaimResult {
    const holder = this.held.get(id);
    if (holder !== undefined) return { claimed: false, holder };
    this.held.set(id, claim);
    return { claimed: true };
  }

  release(id: string, requestId: string): void {
    if (this.held.get(id)?.requestId === requestId) this.held.delete(id);
  }

  /** Claims held now (for tests and the drain). */
  get size(): number {
    return this.held.size;
  }

  close(): Promise<void> {
    this.held.clear();
    return Promise.resolve();
  }
}
