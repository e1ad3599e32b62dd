/**
 * GET /readyz through a real listening gateway: 200 with its checks when the storage answers,
 * Redis (when configured) is connected, a route is available and the instance is not draining;
 * otherwise 503 `not_ready` naming the failing checks.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isEnvelope, startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { uniquePrefix } from '../support/redis.js';
import { PrivateRedis, privateRedisMissing, until } from '../support/private-redis.js';
import { freePort } from '../support/ports.js';
import { RawConnection } from '../support/raw-http.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface NotReady {
  status: number;
  headers: Headers;
  body: { error: { message: string; type: string; param: string | null; code: string } };
}

async function readyz(gw: RunningGateway): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(`${gw.url}/readyz`);
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

function expectNotReady(answer: { status: number; headers: Headers; body: unknown }, failing: RegExp): void {
  const { status, headers, body } = answer as NotReady;
  expect(status).toBe(503);
  expect(isEnvelope(body)).toBe(true);
  expect(body.error).toMatchObject({ type: 'service_unavailable', code: 'not_ready', param: null });
  expect(body.error.message).toMatch(/^This gateway instance is not ready: /);
  expect(body.error.message).toMatch(failing);
  expect(headers.get('retry-after')).toBe('1');
  expect(headers.get('x-should-retry')).toBe('true');
  expect(headers.get('x-request-id')).toMatch(/^req_/);
}

let gw: RunningGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe('GET /readyz', () => {
  it('is ready on SQLite, without a key, with every check shown', async () => {
    gw = await startGateway();
    const answer = await readyz(gw);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toEqual({
      status: 'ready',
      checks: {
        storage: { status: 'ok', latency_ms: expect.any(Number) as unknown },
        redis: { status: 'not_configured' },
        routes: { status: 'ok', available: 1, total: 1 },
        draining: { status: 'ok' },
      },
    });
  });

  it('is not ready when the storage no longer answers', async () => {
    gw = await startGateway();
    // The store closed underneath the gateway: every query fails.
    await gw.gateway.store.close();
    expectNotReady(await readyz(gw), /storage \(the query failed\)/);
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    const closing = gw.close();
    gw = undefined;
    await closing.catch(() => undefined);
  });

  it('is not ready when Redis cannot be reached and limits refuse without it', { timeout: 30_000 }, async () => {
    const nobody = await freePort();
    gw = await startGateway({ limits: { redisUrl: `redis://127.0.0.1:${nobody}`, keyPrefix: uniquePrefix(), onUnavailable: 'reject' } });
    const answer = await readyz(gw);
    expectNotReady(answer, /redis \(not connected\)/);
    expect((answer.body as unknown as NotReady['body']).error.message).not.toMatch(/storage|routes|draining/);
  });

  it('stays ready, Redis degraded, when limits fall back to local counters without it', { timeout: 30_000 }, async () => {
    const nobody = await freePort();
    gw = await startGateway({ limits: { redisUrl: `redis://127.0.0.1:${nobody}`, keyPrefix: uniquePrefix(), onUnavailable: 'local' } });
    const answer = await readyz(gw);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'ready', checks: { redis: { status: 'degraded' } } });
  });

  it('is not ready while draining: a request on a connection still open gets 503, the request in flight finishes, and no new connection is taken', async () => {
    gw = await startGateway({
      config: {
        providers: [{ id: 'slow', kind: 'mock', mock: { latency_ms: 1000 } }],
        models: [{ id: 'mock-chat', capabilities: ['chat'], context_window: 4096, routes: [{ provider: 'slow', model: 'm' }] }],
      },
    });
    const running = gw;
    const auth = { authorization: `Bearer ${running.keys.main}` };
    const body = JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 });
    const [a, b, spare] = await Promise.all([RawConnection.open(running.url), RawConnection.open(running.url), RawConnection.open(running.url)]);
    a.send('POST', '/v1/chat/completions', { ...auth, 'content-type': 'application/json' }, body);
    b.send('POST', '/v1/chat/completions', { ...auth, 'content-type': 'application/json' }, body);
    await sleep(300);

    const started = Date.now();
    const closing = running.gateway.close();
    // Pipelined behind the requests in flight: handled now, answered once those are done.
    a.send('GET', '/readyz');
    b.send('GET', '/v1/models', auth);
    await expect(fetch(`${running.url}/healthz`)).rejects.toThrow();

    for (const conn of [a, b]) {
      const done = await conn.response();
      expect(done.status).toBe(200);
      expect((JSON.parse(done.body) as { object: string }).object).toBe('chat.completion');
    }
    const ready = await a.response();
    expectNotReady({ status: ready.status, headers: new Headers(ready.headers), body: JSON.parse(ready.body) }, /draining \(the instance is shutting down\)/);
    const refused = await b.response();
    expect(refused.status).toBe(503);
    expect(refused.headers.connection).toBe('close');
    expect(JSON.parse(refused.body)).toMatchObject({ error: { type: 'service_unavailable', code: 'shutting_down' } });

    // A connection that never carried a request does not hold the drain up.
    await Promise.all([a.closed(), b.closed(), spare.closed()]);
    await closing;
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

const missing = privateRedisMissing('readyz');
const withPrivateRedis = missing === null ? describe : describe.skip;

withPrivateRedis(`GET /readyz and a Redis that goes away${missing === null ? '' : ` (skipped: ${missing})`}`, () => {
  let redis: PrivateRedis;
  const killOnExit = (): void => redis?.killNow();
  beforeAll(async () => {
    redis = new PrivateRedis(await freePort());
    process.once('exit', killOnExit);
    await redis.start();
  });
  afterAll(async () => {
    process.removeListener('exit', killOnExit);
    await redis?.stop();
  });

  it('is ready while Redis is connected, not ready while it is down, and ready again once it is back', { timeout: 30_000 }, async () => {
    gw = await startGateway({ limits: { redisUrl: redis.url, keyPrefix: uniquePrefix(), onUnavailable: 'reject' } });
    const running = gw;
    const up = await readyz(running);
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ status: 'ready', checks: { redis: { status: 'ok' } } });

    await redis.stop();
    await until(async () => (await readyz(running)).status === 503, 5000, '/readyz to see Redis gone');
    expectNotReady(await readyz(running), /redis \(not connected\)/);

    await redis.start();
    await until(async () => (await readyz(running)).status === 200, 10_000, '/readyz to see Redis back');
  });
});
