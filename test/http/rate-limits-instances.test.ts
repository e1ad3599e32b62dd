/**
 * Rate limits shared by several gateway instances through the machine's Redis: three gateways,
 * each with its own port and its own in-memory SQLite, one key prefix and one API key. Whatever
 * instance a request lands on, the key gets the limit once, not once per instance.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { isEnvelope, startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { REDIS_URL, clearPrefix, redisAvailable, uniquePrefix } from '../support/redis.js';

const available = await redisAvailable();

interface Cluster {
  prefix: string;
  gateways: RunningGateway[];
  key: string;
}

/** Three gateways on one Redis prefix, all knowing the same key. */
async function startCluster(limits: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Cluster> {
  const prefix = uniquePrefix();
  const options = {
    limits: { keyPrefix: prefix },
    keys: { main: {} },
    config: { ...extra, tiers: { standard: { models: ['*'], endpoints: ['*'], limits } } },
  };
  const first = await startGateway(options);
  const gateways = [first];
  try {
    for (let i = 0; i < 2; i++) gateways.push(await startGateway({ ...options, presetKeys: { main: first.keys.main! } }));
  } catch (err) {
    await stopCluster({ prefix, gateways, key: first.keys.main! });
    throw err;
  }
  return { prefix, gateways, key: first.keys.main! };
}

/** The public id of an API key `sk-tg-<id>-<secret>`, which its counters are named by. */
function keyIdOf(key: string): string {
  const id = /^sk-tg-([A-Za-z0-9]+)-/.exec(key)?.[1];
  if (id === undefined) throw new Error('not a Tollgate API key');
  return id;
}

async function stopCluster(cluster: Cluster | undefined): Promise<void> {
  if (cluster === undefined) return;
  await Promise.allSettled(cluster.gateways.map((g) => g.close()));
  await clearPrefix(cluster.prefix);
}

interface Answer {
  status: number;
  headers: Headers;
  body: { error?: { message: string; type: string; param: string | null; code: string } };
}

function chat(gw: RunningGateway, key: string): Promise<Answer> {
  return fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] }),
  }).then(async (res) => ({ status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] }));
}

/** `count` concurrent chat requests, round-robin over the instances. */
function burst(cluster: Cluster, count: number): Promise<Answer[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => chat(cluster.gateways[i % cluster.gateways.length]!, cluster.key)));
}

async function modelLimits(gw: RunningGateway, key: string): Promise<Record<string, { limit: number; remaining: number; reset?: number } | null>> {
  const res = await fetch(`${gw.baseURL}/models/mock-chat`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { limits: Record<string, { limit: number; remaining: number; reset?: number } | null> }).limits;
}

function split(answers: Answer[]): { ok: Answer[]; refused: Answer[]; other: Answer[] } {
  return {
    ok: answers.filter((a) => a.status === 200),
    refused: answers.filter((a) => a.status === 429),
    other: answers.filter((a) => a.status !== 200 && a.status !== 429),
  };
}

const INTEGER = /^\d+$/;

describe.runIf(available)('rate limits shared by three instances through Redis', () => {
  describe('requests per minute', () => {
    let cluster: Cluster | undefined;
    beforeAll(async () => {
      cluster = await startCluster({ requests_per_minute: 20 });
    });
    afterAll(() => stopCluster(cluster));

    it('admits exactly the limit over all instances and refuses the rest with an honest 429', async () => {
      const c = cluster!;
      const answers = await burst(c, 60);
      const { ok, refused, other } = split(answers);
      expect(other.map((a) => a.status)).toEqual([]);
      expect(ok).toHaveLength(20);
      expect(refused).toHaveLength(40);

      const nowSeconds = Math.floor(Date.now() / 1000);
      for (const a of ok) {
        expect(a.headers.get('x-ratelimit-limit')).toBe('20');
        expect(Number(a.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
        expect(Number(a.headers.get('x-ratelimit-remaining'))).toBeLessThan(20);
      }
      // Each admitted request saw a different count: the remaining values are 19, 18, ... 0.
      expect(ok.map((a) => Number(a.headers.get('x-ratelimit-remaining'))).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      for (const a of refused) {
        expect(isEnvelope(a.body)).toBe(true);
        expect(a.body.error).toMatchObject({ type: 'rate_limit_error', code: 'requests_per_minute_exceeded', param: null });
        const retryAfter = a.headers.get('retry-after');
        expect(retryAfter).toMatch(INTEGER);
        expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
        expect(Number(retryAfter)).toBeLessThanOrEqual(62);
        expect(a.headers.get('x-ratelimit-limit')).toBe('20');
        expect(a.headers.get('x-ratelimit-remaining')).toBe('0');
        const reset = a.headers.get('x-ratelimit-reset');
        expect(reset).toMatch(INTEGER);
        expect(Number(reset)).toBeGreaterThan(nowSeconds);
        expect(Number(reset)).toBeLessThanOrEqual(nowSeconds + 63);
      }

      // Every request counted once in the one shared window, refused ones included.
      const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 0 });
      try {
        const keys = await redis.keys(`${c.prefix}rl:{${keyIdOf(c.key)}}:rpm:*`);
        expect(keys).toHaveLength(1);
        const buckets = await redis.hvals(keys[0]!);
        expect(buckets.reduce((sum, n) => sum + Number(n), 0)).toBe(60);
      } finally {
        redis.disconnect();
      }

      // Any instance now refuses, and reports the shared count.
      for (const gw of c.gateways) {
        const late = await chat(gw, c.key);
        expect(late.status).toBe(429);
        expect(late.body.error?.code).toBe('requests_per_minute_exceeded');
      }
      const limits = await modelLimits(c.gateways[1]!, c.key);
      expect(limits.requests_per_minute).toMatchObject({ limit: 20, remaining: 0 });
    });
  });

  describe('requests in flight', () => {
    let cluster: Cluster | undefined;
    beforeAll(async () => {
      cluster = await startCluster({ max_in_flight: 3 }, { providers: [{ id: 'mock', kind: 'mock', mock: { latency_ms: 1000 } }] });
    });
    afterAll(() => stopCluster(cluster));

    it('admits exactly the cap at once over all instances and frees the slots when requests end', async () => {
      const c = cluster!;
      const pending = Array.from({ length: 12 }, (_, i) => chat(c.gateways[i % 3]!, c.key));
      // The refusals come back at once; the three admitted requests are still at the upstream.
      const refusedEarly = await Promise.all(pending.map((p) => Promise.race([p, new Promise<null>((resolve) => setTimeout(() => resolve(null), 600))])));
      const during = await modelLimits(c.gateways[2]!, c.key);
      expect(refusedEarly.filter((a) => a !== null && a.status === 429)).toHaveLength(9);
      expect(during.in_flight).toEqual({ limit: 3, remaining: 0 });

      const answers = await Promise.all(pending);
      const { ok, refused, other } = split(answers);
      expect(other.map((a) => a.status)).toEqual([]);
      expect(ok).toHaveLength(3);
      expect(refused).toHaveLength(9);
      for (const a of refused) {
        expect(isEnvelope(a.body)).toBe(true);
        expect(a.body.error).toMatchObject({ type: 'rate_limit_error', code: 'too_many_requests_in_flight' });
        expect(a.headers.get('retry-after')).toBe('1');
        expect(a.headers.get('x-should-retry')).toBe('true');
      }

      // Releasing a slot is sent to Redis as the response goes out, so allow it a moment to land.
      for (const gw of c.gateways) {
        await expect.poll(async () => (await modelLimits(gw, c.key)).in_flight, { timeout: 2000, interval: 50 }).toEqual({ limit: 3, remaining: 3 });
      }
      const limits = await modelLimits(c.gateways[0]!, c.key);
      expect(limits).toMatchObject({ tokens_per_minute: null, daily: null, in_flight: { limit: 3, remaining: 3 } });

      // And the freed slots are usable from any instance again.
      const again = split(await Promise.all(c.gateways.map((gw) => chat(gw, c.key))));
      expect(again.ok).toHaveLength(3);
    });
  });

  describe('daily cap', () => {
    let cluster: Cluster | undefined;
    beforeAll(async () => {
      cluster = await startCluster({ daily: { chat: 7 } });
    });
    afterAll(() => stopCluster(cluster));

    it('admits exactly the cap over all instances and tells the rest not to retry before 00:00 UTC', async () => {
      const c = cluster!;
      const answers = await burst(c, 20);
      const secondsToMidnight = (86_400_000 - (Date.now() % 86_400_000)) / 1000;
      const { ok, refused, other } = split(answers);
      expect(other.map((a) => a.status)).toEqual([]);
      expect(ok).toHaveLength(7);
      expect(refused).toHaveLength(13);
      for (const a of refused) {
        expect(isEnvelope(a.body)).toBe(true);
        expect(a.body.error).toMatchObject({ type: 'rate_limit_error', code: 'daily_cap_exceeded' });
        expect(a.headers.get('x-should-retry')).toBe('false');
        const retryAfter = a.headers.get('retry-after');
        expect(retryAfter).toMatch(INTEGER);
        expect(Math.abs(Number(retryAfter) - secondsToMidnight)).toBeLessThanOrEqual(5);
      }

      const midnight = Math.ceil(Date.now() / 86_400_000) * 86_400;
      for (const gw of c.gateways) {
        const limits = await modelLimits(gw, c.key);
        expect(limits.daily).toEqual({ limit: 7, remaining: 0, reset: midnight });
        const late = await chat(gw, c.key);
        expect(late.status).toBe(429);
        expect(late.body.error?.code).toBe('daily_cap_exceeded');
      }
    });
  });
});
