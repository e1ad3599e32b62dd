import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/index.js';
import type { CatalogModel } from '../catalog/model-catalog.js';
import type { ModelConfig, RoutingConfig } from '../config/schema.js';
import type { Capability } from '../protocol/capabilities.js';
import type { ProviderAdapter } from '../providers/types.js';
import { Router, type RouteTarget } from './router.js';
import { orderGroup } from './strategies.js';

const ROUTING: RoutingConfig = {
  strategy: 'weighted',
  max_attempts: 3,
  avoid_failed_route_ms: 60_000,
  circuit_breaker: { consecutive_failures: 2, failure_rate: 0.5, min_requests: 20, window_ms: 30_000, cooldown_ms: 30_000, max_retry_after_ms: 300_000 },
};

function adapter(id: string, lacks: Capability[] = []): ProviderAdapter {
  return { id, kind: 'mock', implements: (c) => !lacks.includes(c), chat: () => Promise.reject(new Error('unused')), chatStream: () => Promise.reject(new Error('unused')), close: async () => {} };
}

const adapters = new Map([
  ['a', adapter('a')],
  ['b', adapter('b')],
  ['c', adapter('c', ['tools'])],
]);

function model(routes: Array<{ provider: string; priority?: number; weight?: number }>, routing?: ModelConfig['routing']): { config: ModelConfig; catalog: CatalogModel } {
  const config = {
    id: 'm',
    owned_by: 'x',
    capabilities: ['chat', 'tools'],
    context_window: 1000,
    max_output_tokens: 100,
    tokens_per_image: 0,
    price: { input_per_million_tokens: 0, output_per_million_tokens: 0 },
    routes: routes.map((r) => ({ provider: r.provider, model: `up-${r.provider}`, priority: r.priority ?? 1, weight: r.weight ?? 1 })),
    ...(routing ? { routing } : {}),
  } as ModelConfig;
  return { config, catalog: { id: 'm', config } as CatalogModel };
}

/** The order a plan hands routes out, releasing each. */
function walk(router: Router, catalog: CatalogModel, needs: Capability[] = [], caller = 'key'): string[] {
  const plan = router.plan(catalog, needs.map((capability) => ({ capability })), caller);
  const order: string[] = [];
  for (let route = plan.next(); route !== null; route = plan.next()) {
    order.push(route.provider);
    route.health.release();
  }
  return order;
}

describe('Router', () => {
  it('tries priority groups in order, and leaves out routes that lack a capability the request needs', () => {
    const { config, catalog } = model([{ provider: 'c', priority: 1 }, { provider: 'b', priority: 2 }, { provider: 'a', priority: 3 }], { strategy: 'priority' });
    const router = new Router([config], adapters, ROUTING);
    expect(walk(router, catalog)).toEqual(['c', 'b', 'a']);
    expect(walk(router, catalog, ['tools'])).toEqual(['b', 'a']);
  });

  it('answers 501 naming the capability when no route implements it', () => {
    const { config, catalog } = model([{ provider: 'c' }]);
    const router = new Router([config], adapters, ROUTING);
    const err = (() => {
      try {
        router.plan(catalog, [{ capability: 'tools' }], 'key');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ status: 501, code: 'capability_not_implemented' });
    expect((err as Error).message).toContain('tools');
  });

  it('stops at the model\'s number of attempts', () => {
    const { config, catalog } = model([{ provider: 'a' }, { provider: 'b' }, { provider: 'c' }], { strategy: 'priority', max_attempts: 2 });
    expect(walk(new Router([config], adapters, ROUTING), catalog)).toEqual(['a', 'b']);
  });

  it('skips open circuits, and answers 503 with Retry-After when every route is open', () => {
    const { config, catalog } = model([{ provider: 'a' }, { provider: 'b' }], { strategy: 'priority' });
    const router = new Router([config], adapters, ROUTING);
    const fail = (provider: string): void => {
      const plan = router.plan(catalog, [], 'k');
      for (let r = plan.next(); r !== null; r = plan.next()) {
        if (r.provider === provider) r.health.failed();
        r.health.release();
      }
    };
    fail('a');
    fail('a');
    expect(walk(router, catalog)).toEqual(['b']);
    expect(router.availability()).toEqual({ available: 1, total: 2 });
    fail('b');
    fail('b');
    const plan = router.plan(catalog, [], 'k');
    expect(plan.next()).toBeNull();
    const err = plan.unavailable();
    expect(err).toMatchObject({ status: 503, code: 'no_route_available' });
    expect(err.retryAfterSeconds).toBeGreaterThanOrEqual(29);
  });

  it('routes a caller away from the routes that just failed it, for that model only', () => {
    const { config, catalog } = model([{ provider: 'a' }, { provider: 'b' }], { strategy: 'priority' });
    const router = new Router([config], adapters, ROUTING);
    const plan = router.plan(catalog, [], 'alice');
    const first = plan.next()!;
    first.health.release();
    plan.failed.push(first);
    plan.remember();
    expect(walk(router, catalog, [], 'alice')).toEqual(['b', 'a']);
    expect(walk(router, catalog, [], 'bob')).toEqual(['a', 'b']);
    router.plan(catalog, [], 'alice').forget();
    expect(walk(router, catalog, [], 'alice')).toEqual(['a', 'b']);
  });
});

describe('strategies', () => {
  const route = (provider: string, weight = 1, latencyMs: number | null = null, inFlight = 0): RouteTarget =>
    ({ key: provider, provider, upstreamModel: provider, adapter: adapter(provider), weight, health: { latencyMs, inFlight } }) as unknown as RouteTarget;

  it('weighted: the first pick follows the weights', () => {
    const group = [route('a', 3), route('b', 1)];
    let seed = 0;
    const random = (): number => ((seed = (seed * 9301 + 49297) % 233280) / 233280);
    const firsts = { a: 0, b: 0 } as Record<string, number>;
    for (let i = 0; i < 4000; i++) {
      const out: RouteTarget[] = [];
      orderGroup(group, 'weighted', out, random);
      expect(out).toHaveLength(2);
      firsts[out[0]!.provider]!++;
    }
    expect(firsts.a! / 4000).toBeGreaterThan(0.7);
    expect(firsts.a! / 4000).toBeLessThan(0.8);
  });

  it('least_latency and fewest_in_flight order by the route\'s health', () => {
    const out: RouteTarget[] = [];
    orderGroup([route('slow', 1, 90), route('fast', 1, 20), route('new', 1, null)], 'least_latency', out);
    expect(out.map((r) => r.provider)).toEqual(['new', 'fast', 'slow']);
    const busy: RouteTarget[] = [];
    orderGroup([route('busy', 1, null, 5), route('idle', 1, null, 0)], 'fewest_in_flight', busy);
    expect(busy.map((r) => r.provider)).toEqual(['idle', 'busy']);
  });
});
