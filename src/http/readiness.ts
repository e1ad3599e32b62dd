/**
 * Whether this instance should get traffic (`GET /readyz`): its storage answers within a second,
 * the shared Redis is connected when the instance cannot serve without it (rate limits with the
 * `reject` outage policy; otherwise an outage shows as `degraded` and the instance stays ready, as
 * it keeps serving), at least one route is available, and it is not draining for shutdown.
 */
import type { Logger } from 'pino';
import type { Store } from '../storage/types.js';

export const STORAGE_PING_TIMEOUT_MS = 1_000;

export interface ReadinessDeps {
  store: Pick<Store, 'ping'>;
  /** Whether commands can be sent to the shared Redis now; null when no Redis is configured. */
  redisReady: (() => boolean) | null;
  /** Whether the instance cannot serve without Redis (limits refuse while it is down); otherwise an outage is only `degraded`. */
  redisRequired: boolean;
  routesAvailable: () => { available: number; total: number };
  draining: () => boolean;
  /** Told when the instance becomes not ready (with the storage error, which callers never see) and ready again. */
  logger: Logger;
}

export type CheckStatus = 'ok' | 'failing' | 'degraded' | 'not_configured';

export interface ReadinessChecks {
  storage: { status: CheckStatus; latency_ms?: number; error?: string };
  redis: { status: CheckStatus };
  routes: { status: CheckStatus; available: number; total: number };
  draining: { status: CheckStatus };
}

export interface ReadinessReport {
  ready: boolean;
  checks: ReadinessChecks;
  /** One phrase per failing check, for the 503's message. */
  failures: string[];
}

export class Readiness {
  /** The storage ping not yet answered: probes share it instead of piling up on a stuck database. */
  private outstanding: Promise<void> | null = null;
  private lastReady = true;

  constructor(
    private readonly deps: ReadinessDeps,
    private readonly pingTimeoutMs = STORAGE_PING_TIMEOUT_MS,
  ) {}

  async check(): Promise<ReadinessReport> {
    const failures: string[] = [];
    const { check: storage, cause } = await this.storage();
    if (storage.status !== 'ok') failures.push(`storage (${storage.error ?? 'failing'})`);
    let redis: ReadinessChecks['redis'] = { status: 'not_configured' };
    if (this.deps.redisReady !== null) {
      const up = this.deps.redisReady();
      redis = { status: up ? 'ok' : this.deps.redisRequired ? 'failing' : 'degraded' };
      if (redis.status === 'failing') failures.push('redis (not connected)');
    }
    const { available, total } = this.deps.routesAvailable();
    const routes: ReadinessChecks['routes'] = { status: available > 0 ? 'ok' : 'failing', available, total };
    if (routes.status !== 'ok') failures.push(`routes (${available} of ${total} available)`);
    const draining: ReadinessChecks['draining'] = { status: this.deps.draining() ? 'failing' : 'ok' };
    if (draining.status !== 'ok') failures.push('draining (the instance is shutting down)');
    const ready = failures.length === 0;
    // Logged when it changes, not at every probe. Draining is logged by the drain itself.
    if (ready !== this.lastReady && draining.status === 'ok') {
      if (ready) this.deps.logger.info('ready again');
      else this.deps.logger.warn({ failing: failures, err: cause }, 'not ready');
    }
    this.lastReady = ready;
    return { ready, checks: { storage, redis, routes, draining }, failures };
  }

  /** The storage check as shown to callers, and the error behind a failure, for the log only. */
  private async storage(): Promise<{ check: ReadinessChecks['storage']; cause?: unknown }> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.pingTimeoutMs);
    });
    try {
      const answer = await Promise.race([this.ping().then(() => 'answered' as const), timeout]);
      if (answer === 'timeout') return { check: { status: 'failing', error: `no answer within ${this.pingTimeoutMs} ms` } };
      return { check: { status: 'ok', latency_ms: Math.round((performance.now() - started) * 100) / 100 } };
    } catch (err) {
      // The driver's message may name hosts and ports: it goes to the log, not to unauthenticated callers.
      return { check: { status: 'failing', error: 'the query failed' }, cause: err };
    } finally {
      clearTimeout(timer);
    }
  }

  private ping(): Promise<void> {
    if (this.outstanding === null) {
      const ping: Promise<void> = this.deps.store.ping().finally(() => {
        if (this.outstanding === ping) this.outstanding = null;
      });
      this.outstanding = ping;
    }
    return this.outstanding;
  }
}
