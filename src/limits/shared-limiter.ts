/**
 * Rate limits shared through Redis, with the configured policy for when Redis cannot be reached:
 * `local` keeps serving on this instance's own memory counters (each instance then enforces the
 * limits alone, so N instances admit up to N times the limit), `reject` answers 503 with a
 * Retry-After. Either way the outage is logged once, and Redis is used again as soon as it is back.
 * An admission is settled by the backend that granted it.
 */
import { GatewayError } from '../errors/index.js';
import type { RedisConnection } from '../storage/redis/redis-connection.js';
import type { LimitPlan } from './plan.js';
import type { Admission, AdmissionRequest, LimitsView, RateLimiter } from './types.js';

export type OutagePolicy = 'local' | 'reject';

/** How long a client refused during an outage should wait: about one reconnection attempt. */
const OUTAGE_RETRY_SECONDS = 2;
/**
 * After a failed command (the connection may still look up, e.g. a stalled server), requests skip
 * Redis this long instead of each waiting out the command timeout.
 */
const BACKOFF_MS = 1_000;

export class SharedLimiter implements RateLimiter {
  private skipUntil = 0;
  /** The connection a failure was seen on; a reconnection since then ends the back-off at once. */
  private failedOnConnection = -1;

  constructor(
    private readonly connection: RedisConnection,
    private readonly shared: RateLimiter,
    private readonly local: RateLimiter,
    private readonly policy: OutagePolicy,
  ) {}

  admit(request: AdmissionRequest): Admission | Promise<Admission> {
    if (!this.usable()) return this.fallback(() => this.local.admit(request));
    return (this.shared.admit(request) as Promise<Admission>).then(
      (admission) => this.succeeded(admission),
      (err: unknown) => {
        // A refusal is an answer: Redis is fine.
        if (err instanceof GatewayError) throw this.succeeded(err);
        this.failed(err);
        return this.fallback(() => this.local.admit(request));
      },
    );
  }

  peek(keyId: string, plan: LimitPlan): LimitsView | Promise<LimitsView> {
    if (!this.usable()) return this.fallback(() => this.local.peek(keyId, plan));
    return (this.shared.peek(keyId, plan) as Promise<LimitsView>).then(
      (view) => this.succeeded(view),
      (err: unknown) => {
        this.failed(err);
        return this.fallback(() => this.local.peek(keyId, plan));
      },
    );
  }

  private usable(): boolean {
    if (!this.connection.ready) return false;
    return this.skipUntil === 0 || this.connection.readyCount !== this.failedOnConnection || Date.now() >= this.skipUntil;
  }

  private succeeded<T>(value: T): T {
    this.skipUntil = 0;
    this.connection.markUp();
    return value;
  }

  private failed(err: unknown): void {
    this.skipUntil = Date.now() + BACKOFF_MS;
    this.failedOnConnection = this.connection.readyCount;
    this.connection.markDown(err);
  }

  private fallback<T>(local: () => T): T {
    // While backing off on a connection that looks up, the failure that started it was recorded.
    if (!this.connection.ready) this.connection.markDown(new Error(`connection ${this.connection.status}`));
    if (this.policy === 'local') return local();
    throw new GatewayError('rate_limiter_unavailable', 'Rate limits cannot be checked right now (the shared limit store is unreachable), so the gateway refuses requests until it returns. Retry shortly.', {
      retryAfterSeconds: OUTAGE_RETRY_SECONDS,
    });
  }

  async close(): Promise<void> {
    await Promise.all([this.shared.close(), this.local.close()]);
  }
}
