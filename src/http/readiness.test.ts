import { describe, expect, it } from 'vitest';
import { createLogger } from '../logging/logger.js';
import { Readiness, type ReadinessDeps } from './readiness.js';

function deps(over: Partial<ReadinessDeps> = {}): ReadinessDeps {
  return {
    store: { ping: () => Promise.resolve() },
    redisReady: null,
    redisRequired: true,
    routesAvailable: () => ({ available: 2, total: 2 }),
    draining: () => false,
    logger: createLogger('silent'),
    ...over,
  };
}

describe('Readiness', () => {
  it('is ready when every check passes', async () => {
    const report = await new Readiness(deps({ redisReady: () => true })).check();
    expect(report.ready).toBe(true);
    expect(report.failures).toEqual([]);
    expect(report.checks).toMatchObject({
      storage: { status: 'ok' },
      redis: { status: 'ok' },
      routes: { status: 'ok', available: 2, total: 2 },
      draining: { status: 'ok' },
    });
    expect(typeof report.checks.storage.latency_ms).toBe('number');
  });

  it('stays ready through a Redis outage it can serve through, showing it as degraded', async () => {
    const report = await new Readiness(deps({ redisReady: () => false, redisRequired: false })).check();
    expect(report.ready).toBe(true);
    expect(report.checks.redis).toEqual({ status: 'degraded' });
    const strict = await new Readiness(deps({ redisReady: () => false, redisRequired: true })).check();
    expect(strict.ready).toBe(false);
    expect(strict.failures).toEqual(['redis (not connected)']);
  });

  it('counts a storage that does not answer within the timeout as failing, and shares one ping between probes while it hangs', async () => {
    let pings = 0;
    const readiness = new Readiness(deps({ store: { ping: () => (pings++, new Promise<void>(() => undefined)) } }), 50);
    const started = Date.now();
    const [first, second] = await Promise.all([readiness.check(), readiness.check()]);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(first.ready).toBe(false);
    expect(first.checks.storage).toEqual({ status: 'failing', error: 'no answer within 50 ms' });
    expect(first.failures).toEqual(['storage (no answer within 50 ms)']);
    expect(second.ready).toBe(false);
    expect((await readiness.check()).ready).toBe(false);
    expect(pings).toBe(1);
  });

  it('keeps the storage error out of what callers see', async () => {
    const report = await new Readiness(deps({ store: { ping: () => Promise.reject(new Error('connect ECONNREFUSED 10.1.2.3:5432')) } })).check();
    expect(report.ready).toBe(false);
    expect(JSON.stringify(report)).not.toContain('10.1.2.3');
    expect(report.failures).toEqual(['storage (the query failed)']);
  });

  it('fails on a disconnected Redis, no available route, and draining, and lists every failure', async () => {
    const report = await new Readiness(deps({ redisReady: () => false, routesAvailable: () => ({ available: 0, total: 3 }), draining: () => true })).check();
    expect(report.ready).toBe(false);
    expect(report.checks).toMatchObject({ redis: { status: 'failing' }, routes: { status: 'failing', available: 0, total: 3 }, draining: { status: 'failing' } });
    expect(report.failures).toEqual(['redis (not connected)', 'routes (0 of 3 available)', 'draining (the instance is shutting down)']);
  });

  it('reports Redis as not configured when there is none', async () => {
    expect((await new Readiness(deps()).check()).checks.redis).toEqual({ status: 'not_configured' });
  });
});
