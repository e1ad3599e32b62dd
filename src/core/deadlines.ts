/**
 * The deadlines of one request, enforced by cancelling: the generation budget (408) cancels the
 * whole request, from its start; the upstream timeout (504) cancels only the current attempt, so
 * that the request can move to another route: first until the upstream answers, then between
 * stream chunks. Adapters only have to honour their attempt's signal.
 */
import { GatewayError } from '../errors/index.js';
import { Cancellation } from '../util/cancellation.js';

export interface DeadlineSettings {
  budgetMs: number;
  upstreamTimeoutMs: number;
  idleTimeoutMs: number;
}

/** One attempt's cancellation, tied to the request's: a caller that leaves or a budget that ends also ends the attempt. */
export class AttemptCancellation extends Cancellation {
  private readonly onRequestAbort = (): void => this.abort(this.request.reason);

  constructor(private readonly request: Cancellation) {
    super();
    if (request.aborted) this.abort(request.reason);
    else request.once('abort', this.onRequestAbort);
  }

  /** The attempt is over: the request's cancellation no longer needs to reach it. */
  detach(): void {
    this.request.removeListener('abort', this.onRequestAbort);
  }
}

export class CallDeadlines {
  private readonly startedAt = performance.now();
  /** Until the upstream answers: one timer for whichever of the two deadlines comes first. */
  private timer: NodeJS.Timeout | undefined;
  /** While streaming: the budget, beside the idle timer that each chunk refreshes. */
  private budget: NodeJS.Timeout | undefined;
  private attempt: Cancellation | undefined;
  /** Whether the attempt's timer is the budget's (it ends first) rather than the upstream's. */
  private timerIsBudget = false;
  /**
   * While streaming: a chunk is being relayed and the next one not yet asked for, so the time
   * passing is the gateway's or the caller's (a client slow to read holds the relay back), not
   * the upstream's silence. The idle timer does not fire then; it starts over when the next chunk
   * is asked for.
   */
  private relaying = false;

  constructor(
    private readonly request: Cancellation,
    private readonly settings: DeadlineSettings,
    private readonly budgetMs: number,
  ) {}

  /** An attempt starts: it has the upstream timeout, within what is left of the budget. */
  startAttempt(attempt: Cancellation): void {
    this.attempt = attempt;
    clearTimeout(this.timer);
    const left = this.budgetLeft();
    if (left <= 0) {
      this.request.abort(this.budgetError());
      return;
    }
    this.timerIsBudget = left <= this.settings.upstreamTimeoutMs;
    this.timer = setTimeout(() => this.expired(), Math.min(left, this.settings.upstreamTimeoutMs));
  }

  /** The upstream has started streaming: from now on the upstream timer measures idle gaps. */
  streamStarted(firstChunkInHand = true): void {
    clearTimeout(this.timer);
    this.budget = setTimeout(() => this.request.abort(this.budgetError()), Math.max(1, this.budgetLeft()));
    // With the first chunk in hand (a chat stream reads ahead to it), it is being relayed until the
    // next one is asked for; without (a relayed body), the upstream's silence counts from now.
    this.relaying = firstChunkInHand;
    this.timer = setTimeout(() => this.idle(), this.settings.idleTimeoutMs);
  }

  /** A stream chunk arrived: until the next one is asked for, the upstream is not waited on. */
  progress(): void {
    this.relaying = true;
  }

  /** The next stream chunk is asked for: the upstream's silence counts from now. */
  awaitingUpstream(): void {
    if (this.budget === undefined) return;
    this.relaying = false;
    // Also re-arms a timer that fired while the chunk was being relayed.
    this.timer?.refresh();
  }

  clear(): void {
    clearTimeout(this.timer);
    clearTimeout(this.budget);
  }

  private idle(): void {
    if (this.relaying) return;
    this.attempt?.abort(new GatewayError('upstream_timeout', `The upstream provider did not send the next chunk within ${this.settings.idleTimeoutMs} ms.`));
  }

  private budgetLeft(): number {
    return this.budgetMs - (performance.now() - this.startedAt);
  }

  /** The attempt's timer fired: it was set for the earlier of the two deadlines. */
  private expired(): void {
    if (this.timerIsBudget) this.request.abort(this.budgetError());
    else this.attempt?.abort(new GatewayError('upstream_timeout', `The upstream provider did not answer within ${this.settings.upstreamTimeoutMs} ms.`));
  }

  private budgetError(): GatewayError {
    return new GatewayError('generation_timeout', `The generation exceeded its time budget of ${this.budgetMs} ms.`);
  }
}
