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

/**
 * One timer for all of a request's deadlines, checked when it fires rather than kept exact: a
 * stream used to set three (the attempt's, then the budget's and the idle timer, refreshed at
 * every chunk), and each cost a timer object, a list insertion and its removal on the hot path,
 * though they almost never fire. It is set for the nearest deadline known, and never further off
 * than the idle timeout, the shortest wait a deadline that starts later can have (a stream's idle
 * one): so it fires in time for every deadline. When it fires, what has passed is enforced, and it
 * is set again for the nearest deadline left.
 */
export class CallDeadlines {
  private readonly startedAt = performance.now();
  private timer: NodeJS.Timeout | undefined;
  private attempt: Cancellation | undefined;
  private attemptStartedAt = 0;
  /** Set once the upstream started streaming: from then on its silence is timed, not its answer. */
  private streaming = false;
  /**
   * While streaming: a chunk is being relayed and the next one not yet asked for, so the time
   * passing is the gateway's or the caller's (a client slow to read holds the relay back), not
   * the upstream's silence. The idle deadline does not count then; it starts over when the next
   * chunk is asked for.
   */
  private relaying = false;
  /** While streaming and not relaying: since when the upstream has been waited on. */
  private waitingSince = 0;

  constructor(
    private readonly request: Cancellation,
    private readonly settings: DeadlineSettings,
    private readonly budgetMs: number,
  ) {}

  /** An attempt starts: it has the upstream timeout, within what is left of the budget. */
  startAttempt(attempt: Cancellation): void {
    this.attempt = attempt;
    this.attemptStartedAt = performance.now();
    if (this.budgetLeft(this.attemptStartedAt) <= 0) {
      clearTimeout(this.timer);
      this.request.abort(this.budgetError());
      return;
    }
    this.arm(this.attemptStartedAt);
  }

  /** The upstream has started streaming: from now on the upstream timeout measures idle gaps. */
  streamStarted(firstChunkInHand = true): void {
    this.streaming = true;
    // With the first chunk in hand (a chat stream reads ahead to it), it is being relayed until the
    // next one is asked for; without (a relayed body), the upstream's silence counts from now.
    this.relaying = firstChunkInHand;
    this.waitingSince = performance.now();
  }

  /** A stream chunk arrived: until the next one is asked for, the upstream is not waited on. */
  progress(): void {
    this.relaying = true;
  }

  /** The next stream chunk is asked for: the upstream's silence counts from now. */
  awaitingUpstream(): void {
    if (!this.streaming) return;
    this.relaying = false;
    this.waitingSince = performance.now();
  }

  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Sets the timer for the nearest deadline after `now`, but no later than one idle timeout away.
   * Whole milliseconds: Node keeps one timer list per duration, and the usual one (the idle
   * timeout) is then shared by every request instead of a list of its own each.
   */
  private arm(now: number): void {
    clearTimeout(this.timer);
    const wait = Math.min(Math.ceil(this.nextDeadline(now) - now), this.settings.idleTimeoutMs);
    this.timer = setTimeout(() => this.check(), Math.max(1, wait));
  }

  /** The earliest time at which a deadline can pass, as things stand at `now`. */
  private nextDeadline(now: number): number {
    const budgetEnd = this.startedAt + this.budgetMs;
    if (!this.streaming) return Math.min(budgetEnd, this.attemptStartedAt + this.settings.upstreamTimeoutMs);
    const idleEnd = this.relaying ? now + this.settings.idleTimeoutMs : this.waitingSince + this.settings.idleTimeoutMs;
    return Math.min(budgetEnd, idleEnd);
  }

  /** The timer fired: enforce whatever deadline has passed, else wait for the next one. */
  private check(): void {
    this.timer = undefined;
    const now = performance.now();
    if (this.budgetLeft(now) <= 0) {
      this.request.abort(this.budgetError());
    } else if (!this.streaming && now - this.attemptStartedAt >= this.settings.upstreamTimeoutMs) {
      this.attempt?.abort(new GatewayError('upstream_timeout', `The upstream provider did not answer within ${this.settings.upstreamTimeoutMs} ms.`));
    } else if (this.streaming && !this.relaying && now - this.waitingSince >= this.settings.idleTimeoutMs) {
      this.attempt?.abort(new GatewayError('upstream_timeout', `The upstream provider did not send the next chunk within ${this.settings.idleTimeoutMs} ms.`));
    } else {
      this.arm(now);
    }
  }

  private budgetLeft(now: number): number {
    return this.budgetMs - (now - this.startedAt);
  }

  private budgetError(): GatewayError {
    return new GatewayError('generation_timeout', `The generation exceeded its time budget of ${this.budgetMs} ms.`);
  }
}
