import type { ServerResponse } from 'node:http';
import type { Cancellation } from '../util/cancellation.js';

/** In-flight slots of the instance (the load shedder's), for requests that outlive their response. */
export interface InFlightSlots {
  hold(): () => void;
}

/**
 * Route handlers still running. A drain that cuts connections at its deadline waits for them, so
 * that what they settle once they see their caller gone (the charge for what a stream delivered,
 * the usage record) is queued before billing is flushed and the store closes.
 */
export class InFlightWork {
  private running = 0;
  private waiters: Array<() => void> = [];
  private readonly detached = new Set<Cancellation>();
  /** Streams being answered: a drain that reaches its deadline ends them with an error frame. */
  private readonly streams = new Set<Cancellation>();
  private streamWaiters: Array<() => void> = [];

  constructor(private readonly slots: InFlightSlots | null = null) {}

  /**
   * A request that runs on when its caller leaves (under an Idempotency-Key, to be recorded for the
   * resend): a drain that reaches its deadline cancels it, and once its caller is gone it keeps
   * the in-flight slot its response held, so that such requests cannot pile up past
   * `server.max_in_flight`. Returns the call that forgets it.
   */
  track(controller: Cancellation, res: ServerResponse): () => void {
    this.detached.add(controller);
    let done = false;
    let release: (() => void) | null = null;
    const onClose = (): void => {
      if (!done && !res.writableFinished) release = this.slots?.hold() ?? null;
    };
    // Before the shedder's own listener gives the response's slot back: the count never dips.
    res.prependOnceListener('close', onClose);
    return () => {
      done = true;
      res.off('close', onClose);
      this.detached.delete(controller);
      release?.();
    };
  }

  /** A stream is being answered under `controller`; returns the call that forgets it. */
  streaming(controller: Cancellation): () => void {
    this.streams.add(controller);
    return () => {
      this.streams.delete(controller);
      if (this.streams.size === 0 && this.streamWaiters.length > 0) for (const wake of this.streamWaiters.splice(0)) wake();
    };
  }

  /** Resolves once no stream is being answered, or after `timeoutMs`. */
  streamsEnded(timeoutMs: number): Promise<void> {
    if (this.streams.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.streamWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Cancels every stream being answered, with `reason`: each ends with an error frame saying so,
   * where cutting its connection would end it without a word. Returns how many.
   */
  cancelStreams(reason: unknown): number {
    for (const controller of this.streams) controller.abort(reason);
    return this.streams.size;
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
