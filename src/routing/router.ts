/**
 * Chooses where a request goes. A model's routes come in priority groups (lowest number first);
 * inside a group the model's strategy orders them. Routes whose adapter cannot serve what the
 * request needs are left out (501 if that leaves none); routes the caller just saw fail go last.
 * The pipeline then walks the order through a RoutePlan, which skips routes whose circuit is
 * open or that are cooling down, up to the model's number of attempts.
 */
import { GatewayError, retryableAfter } from '../errors/index.js';
import type { CatalogModel } from '../catalog/model-catalog.js';
import type { ModelConfig, RoutingConfig, Strategy } from '../config/schema.js';
import type { Capability } from '../protocol/capabilities.js';
import type { ProviderAdapter } from '../providers/types.js';
import { RecentFailures } from './recent-failures.js';
import { RouteHealth, type BreakerSettings } from './route-health.js';
import { orderGroup } from './strategies.js';

export interface RouteTarget {
  /** `provider/upstream-model`: names the route in logs and metrics. */
  readonly key: string;
  readonly provider: string;
  readonly upstreamModel: string;
  readonly adapter: ProviderAdapter;
  readonly weight: number;
  readonly health: RouteHealth;
}

interface ModelRoutes {
  readonly groups: readonly (readonly RouteTarget[])[];
  readonly strategy: Strategy;
  readonly maxAttempts: number;
}

export class Router {
  private readonly byModel = new Map<string, ModelRoutes>();
  private readonly health = new Map<string, RouteHealth>();
  private readonly recent: RecentFailures;

  constructor(models: readonly ModelConfig[], adapters: ReadonlyMap<string, ProviderAdapter>, routing: RoutingConfig, clock: () => number = Date.now) {
    const b = routing.circuit_breaker;
    const breaker: BreakerSettings = {
      consecutiveFailures: b.consecutive_failures,
      failureRate: b.failure_rate,
      minRequests: b.min_requests,
      windowMs: b.window_ms,
      cooldownMs: b.cooldown_ms,
      maxRetryAfterMs: b.max_retry_after_ms,
    };
    this.recent = new RecentFailures(routing.avoid_failed_route_ms, clock);
    for (const model of models) {
      const byPriority = new Map<number, RouteTarget[]>();
      for (const route of model.routes) {
        const adapter = adapters.get(route.provider);
        if (adapter === undefined) continue;
        const key = `${route.provider}/${route.model}`;
        let health = this.health.get(key);
        if (health === undefined) {
          health = new RouteHealth(key, breaker, clock);
          this.health.set(key, health);
        }
        const group = byPriority.get(route.priority) ?? [];
        group.push({ key, provider: route.provider, upstreamModel: route.model, adapter, weight: route.weight, health });
        byPriority.set(route.priority, group);
      }
      const groups = [...byPriority.entries()].sort(([a], [b]) => a - b).map(([, group]) => group);
      this.byModel.set(model.id, {
        groups,
        strategy: model.routing?.strategy ?? routing.strategy,
        maxAttempts: model.routing?.max_attempts ?? routing.max_attempts,
      });
    }
  }

  /** The routes to try for one request, in order. Throws 501 when no route's adapter serves what it needs. */
  plan(model: CatalogModel, needs: readonly { capability: Capability }[], callerId: string): RoutePlan {
    const routes = this.byModel.get(model.id);
    const order: RouteTarget[] = [];
    let missing: Capability | undefined;
    if (routes !== undefined) {
      for (const group of routes.groups) {
        const able = group.filter((route) => {
          const lacking = needs.find((need) => !route.adapter.implements(need.capability, route.upstreamModel));
          if (lacking !== undefined) missing = lacking.capability;
          return lacking === undefined;
        });
        if (able.length > 0) orderGroup(able, routes.strategy, order);
      }
    }
    if (order.length === 0) {
      throw new GatewayError(
        'capability_not_implemented',
        `No provider serving the model "${model.id}" implements ${missing ?? 'this request'}. Use a different model for it.`,
      );
    }
    const avoided = order.length > 1 ? this.recent.avoided(callerId, model.id) : undefined;
    if (avoided !== undefined) {
      const fresh = order.filter((r) => !avoided.has(r.key));
      if (fresh.length > 0 && fresh.length < order.length) {
        const last = order.filter((r) => avoided.has(r.key));
        order.length = 0;
        order.push(...fresh, ...last);
      }
    }
    return new RoutePlan(model.id, callerId, order, routes?.maxAttempts ?? 1, this.recent);
  }

  /** Every distinct route, for readiness and metrics. */
  routes(): IterableIterator<RouteHealth> {
    return this.health.values();
  }

  /** How many routes could take a request now. */
  availability(): { available: number; total: number } {
    let available = 0;
    for (const health of this.health.values()) if (health.availableAt() === 0) available++;
    return { available, total: this.health.size };
  }
}

/**
 * One request's walk through its routes. `next()` hands out the next route that can take the
 * attempt (acquired: its in-flight count is taken, and an open circuit past its cool-down makes
 * this attempt the probe).
 */
export class RoutePlan {
  private index = 0;
  private attempts = 0;
  /** The earliest time a skipped route becomes available, for the 503's Retry-After. */
  private soonest = Infinity;
  readonly failed: RouteTarget[] = [];

  constructor(
    private readonly modelId: string,
    private readonly callerId: string,
    private readonly order: readonly RouteTarget[],
    private readonly maxAttempts: number,
    private readonly recent: RecentFailures,
  ) {}

  next(): RouteTarget | null {
    if (this.attempts >= this.maxAttempts) return null;
    while (this.index < this.order.length) {
      const route = this.order[this.index++]!;
      if (route.health.acquire()) {
        this.attempts++;
        return route;
      }
      this.soonest = Math.min(this.soonest, route.health.availableAt());
    }
    return null;
  }

  get attempted(): number {
    return this.attempts;
  }

  /** The answer when not one route could be tried: every route is open or cooling down. */
  unavailable(): GatewayError {
    const seconds = Number.isFinite(this.soonest) ? Math.max(1, Math.ceil((this.soonest - Date.now()) / 1000)) : 1;
    return new GatewayError(
      'no_route_available',
      `No provider can serve the model "${this.modelId}" right now: every route is failing or cooling down. Retry in ${seconds} s, or use another model.`,
      { retryAfterSeconds: seconds, shouldRetry: retryableAfter(seconds) },
    );
  }

  /** The request failed for good: the caller's resend is routed away from what failed. */
  remember(): void {
    if (this.failed.length > 0 && this.order.length > 1) this.recent.note(this.callerId, this.modelId, this.failed.map((r) => r.key));
  }

  /** The request succeeded: what the caller's earlier failures taught no longer applies. */
  forget(): void {
    if (this.order.length > 1) this.recent.forget(this.callerId, this.modelId);
  }
}
