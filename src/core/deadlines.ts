/**
 * The deadlines of one upstream call, all enforced by cancelling the request's one Cancellation
 * with the error to answer: the generation budget (408, from the start of the request) and the
 * upstream timeout (504: first until the upstream answers, then between stream chunks).
 * Adapters only have to honour the signal.
 */
import { GatewayError } from '../errors/index.js';
import type { Cancellation } from '../util/cancellation.js';

export interface DeadlineSettings {
  budgetMs: number;
  upstreamTimeoutMs: number;
  idleTimeoutMs: number;
}

export class CallDeadlines {
  private readonly startedAt = performance.now();
  /** Until the upstream answers: one timer for whichever of the two deadlines comes first. */
  private timer: NodeJS.Timeout;
  /** While streaming: the budget, beside the idle timer that each chunk refreshes. */
  private budget: NodeJS.Timeout | undefined;

  constructor(
    private readonly controller: Cancellation,
    private readonly settings: DeadlineSettings,
  ) {
    this.timer = setTimeout(() => this.expired(), Math.min(settings.budgetMs, settings.upstreamTimeoutMs));
  }

  /** The upstream has started streaming: from now on the upstream timer measures idle gaps. */
  streamStarted(): void {
    clearTimeout(this.timer);
    const left = Math.max(1, this.settings.budgetMs - (performance.now() - this.startedAt));
    this.budget = setTimeout(() => this.abort(this.budgetError()), left);
    this.timer = setTimeout(
      () => this.abort(new GatewayError('upstream_timeout', `The upstream provider did not send the next chunk within ${this.settings.idleTimeoutMs} ms.`)),
      this.settings.idleTimeoutMs,
    );
  }

  /** A stream chunk arrived. */
  progress(): void {
    if (this.budget !== undefined) this.timer.refresh();
  }

  clear(): void {
    clearTimeout(this.timer);
    clearTimeout(this.budget);
  }

  /** The one timer fired: it was set for the earlier of the two deadlines. */
  private expired(): void {
    this.abort(
      this.settings.budgetMs <= this.settings.upstreamTimeoutMs
        ? this.budgetError()
        : new GatewayError('upstream_timeout', `The upstream provider did not answer within ${this.settings.upstreamTimeoutMs} ms.`),
    );
  }

  private budgetError(): GatewayError {
    return new GatewayError('generation_timeout', `The generation exceeded its time budget of ${this.settings.budgetMs} ms.`);
  }

  private abort(reason: GatewayError): void {
    this.controller.abort(reason);
  }
}
