/**
 * The health of one route (a provider and its upstream model), shared by every model that uses
 * it: a circuit breaker, a cool-down the provider asked for, the number of requests in flight and
 * a moving average of time to first byte. Counted per gateway instance: each instance learns a
 * route's health from its own traffic, which is what it needs to route around it.
 */

export interface BreakerSettings {
  /** Consecutive failures that open the circuit. */
  readonly consecutiveFailures: number;
  /** Share of failures in the current window that opens it, once the window has `minRequests`. */
  readonly failureRate: number;
  readonly minRequests: number;
  readonly windowMs: number;
  /** How long an open circuit refuses requests before it lets one probe through. */
  readonly cooldownMs: number;
  /** The longest cool-down an upstream's Retry-After may impose. */
  readonly maxRetryAfterMs: number;
}

export type CircuitState = 'closed' | 'open' | 'half_open';

/** Weight of the newest sample in the moving average of time to first byte. */
const LATENCY_SMOOTHING = 0.2;

export class RouteHealth {
  state: CircuitState = 'closed';
  inFlight = 0;
  /** Moving average of time to first byte in ms; null until the first success. */
  latencyMs: number | null = null;
  private consecutive = 0;
  private windowStart = 0;
  private windowRequests = 0;
  private windowFailures = 0;
  private openUntil = 0;
  private coolUntil = 0;
  private probing = false;

  constructor(
    readonly key: string,
    private readonly settings: BreakerSettings,
    private readonly clock: () => number = Date.now,
  ) {}

  /** When this route can take a request: 0 if now, else the time in ms since the epoch. */
  availableAt(): number {
    const now = this.clock();
    let at = this.coolUntil > now ? this.coolUntil : 0;
    if (this.state === 'open' && this.openUntil > now) at = Math.max(at, this.openUntil);
    // A half-open circuit with its probe out is free again once the probe ends, which is soon.
    if (at === 0 && this.state === 'half_open' && this.probing) at = now + 1_000;
    return at;
  }

  /**
   * Takes the route for one attempt if it is available: an open circuit past its cool-down turns
   * half-open and this attempt becomes its probe. Every successful acquire is followed by release().
   */
  acquire(): boolean {
    const now = this.clock();
    if (this.coolUntil > now) return false;
    if (this.state === 'open') {
      if (this.openUntil > now) return false;
      this.state = 'half_open';
    }
    if (this.state === 'half_open') {
      if (this.probing) return false;
      this.probing = true;
    }
    this.inFlight++;
    return true;
  }

  /** The attempt is over, whatever its outcome; a probe that recorded none lets the next one through. */
  release(): void {
    this.inFlight--;
    if (this.state === 'half_open') this.probing = false;
  }

  /** The upstream answered usably; `latencyMs` is its time to first byte. */
  succeeded(latencyMs: number): void {
    this.answered(latencyMs);
    this.streamCompleted();
  }

  /**
   * A stream's first chunk arrived, `latencyMs` after the call. Its outcome is known only at its
   * end, when streamCompleted() or failed() counts it once: counting a success here let a provider
   * that breaks every stream halfway never reach `consecutive_failures`, and closing a half-open
   * circuit here let such a provider have every request of a cool-down instead of one probe.
   */
  answered(latencyMs: number): void {
    this.latencyMs = this.latencyMs === null ? latencyMs : this.latencyMs + LATENCY_SMOOTHING * (latencyMs - this.latencyMs);
  }

  /** An answer that came whole, or a stream that ran to its end: a probe closes the circuit. */
  streamCompleted(): void {
    this.consecutive = 0;
    this.count(false);
    if (this.state === 'half_open') {
      this.state = 'closed';
      this.probing = false;
    }
  }

  /** The upstream failed in a way that says something about the route (not the caller's fault). */
  failed(): void {
    this.consecutive++;
    this.count(true);
    const s = this.settings;
    const rateTripped = this.windowRequests >= s.minRequests && this.windowFailures / this.windowRequests >= s.failureRate;
    if (this.state === 'half_open' || this.consecutive >= s.consecutiveFailures || rateTripped) this.open();
  }

  /** The longest wait an upstream's Retry-After may impose here, in seconds. */
  get maxRetryAfterSeconds(): number {
    return this.settings.maxRetryAfterMs / 1000;
  }

  /** The provider asked for a pause (429 or 503 with Retry-After): no request goes there until it ends. */
  coolDown(seconds: number): void {
    const until = this.clock() + Math.min(seconds * 1000, this.settings.maxRetryAfterMs);
    if (until > this.coolUntil) this.coolUntil = until;
    // A probe that was told to wait ends the probe; the circuit stays half-open for the next one.
    this.probing = false;
  }

  private open(): void {
    this.state = 'open';
    this.probing = false;
    this.openUntil = this.clock() + this.settings.cooldownMs;
    this.consecutive = 0;
    this.windowRequests = 0;
    this.windowFailures = 0;
  }

  /** Counts one outcome in a fixed window that starts again every `windowMs`. */
  private count(failure: boolean): void {
    const now = this.clock();
    if (now - this.windowStart >= this.settings.windowMs) {
      this.windowStart = now;
      this.windowRequests = 0;
      this.windowFailures = 0;
    }
    this.windowRequests++;
    if (failure) this.windowFailures++;
  }
}
