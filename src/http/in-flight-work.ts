import type { Cancellation } from '../util/cancellation.js';

/**
 * Route handlers still running. A drain that cuts connections at its deadline waits for them, so
 * that what they settle once they see their caller gone (the charge for what a stream delivered,
 * the usage record) is queued before billing is flushed and the store closes.
 */
export class InFlightWork {
  private running = 0;
  private waiters: Array<() => void> = [];
  private readonly detached = new Set<Cancellation>();

  /**
   * A request that runs on when its caller leaves (under an Idempotency-Key, to be recorded for the
   * resend): a drain that reaches its deadline cancels it. Returns the call that forgets it.
   */
  track(controller: Cancellation): () => void {
    this.detached.add(controller);
    return () => this.detached.delete(controller);
  }

  /** Cancels every tracked request; returns how many. */
  cancelTracked(reason: unknown): number {
    for (const controller of this.detached) controller.abort(reason);
    return this.detached.size;
  }

  get count(): number {
    return this.running;
  }

  begin(): void {
    this.running++;
  }

  end(): void {
    this.running--;
    if (this.running === 0 && this.waiters.length > 0) for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves true once no handler runs, or false when `timeoutMs` passes first. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.running === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(wake);
    });
  }
}
