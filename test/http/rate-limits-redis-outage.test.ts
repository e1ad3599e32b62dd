/**
 * Rate limits when the shared Redis goes away and comes back, on a private redis-server this file
 * starts and kills (never the machine's shared one): policy `local` keeps serving on each
 * instance's own counters, policy `reject` answers 503; either way the outage is logged once, and
 * Redis is used again as soon as it is back.
 */
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isEnvelope, startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { uniquePrefix } from '../support/redis.js';
import { PrivateRedis, privateRedisMissing, until, withRedis } from '../support/private-redis.js';
import { freePort } from '../support/ports.js';

const missing = privateRedisMissing('rate-limits-redis-outage');

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** The gateway's log: pino writes one JSON line per call. */
class LogLines extends Writable {
  readonly lines: LogLine[] = [];
  private partial = '';

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.partial += chunk.toString();
    let newline: number;
    while ((newline = this.partial.indexOf('\n')) >= 0) {
      const line = this.partial.slice(0, newline);
      this.partial = this.partial.slice(newline + 1);
      if (line.trim() !== '') this.lines.push(JSON.parse(line) as LogLine);
    }
    callback();
  }

  matching(level: number, pattern: RegExp): LogLine[] {
    return this.lines.filter((l) => l.level === level && pattern.test(l.msg));
  }
}

const WARN = 40;
const INFO = 30;
const UNAVAILABLE = /Redis is unavailable/;
const BACK = /Redis is reachable again/;

interface Answer {
  status: number;
  headers: Headers;
  body: { error?: { message: string; type: string; param: string | null; code: string } };
}

async function chat(gw: RunningGateway, key: string): Promise<Answer> {
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
}

/** The public id of an API key `sk-tg-<id>-<secret>`, which its counters are named by. */
function keyIdOf(key: string): string {
  const id = /^sk-tg-([A-Za-z0-9]+)-/.exec(key)?.[1];
  if (id === undefined) throw new Error('not a Tollgate API key');
  return id;
}

/** Keys under the prefix that count for `key`. */
function countersOf(url: string, prefix: string, key: string): Promise<string[]> {
  return withRedis(url, (redis) => redis.keys(`${prefix}rl:{${keyIdOf(key)}}:*`));
}

function expectRateLimitHeaders(answer: Answer, limit: number): void {
  expect(answer.headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(answer.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
  expect(Number(answer.headers.get('x-ratelimit-remaining'))).toBeLessThan(limit);
  expect(answer.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
}

const suite = missing === null ? describe : describe.skip;
const title = missing === null ? 'rate limits through a Redis that goes away and comes back' : `rate limits through a Redis that goes away and comes back (skipped: ${missing})`;

suite(title, () => {
  let redis: PrivateRedis;
  let gw: RunningGateway | undefined;
  const killOnExit = (): void => redis?.killNow();

  beforeAll(async () => {
    redis = new PrivateRedis(await freePort());
    process.once('exit', killOnExit);
    await redis.start();
  });
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });
  afterAll(async () => {
    process.removeListener('exit', killOnExit);
    await redis?.stop();
  });

  function start(policy: 'local' | 'reject', prefix: string, log: LogLines): Promise<RunningGateway> {
    return startGateway({
      limits: { redisUrl: redis.url, keyPrefix: prefix, onUnavailable: policy },
      logStream: log,
      config: { tiers: { standard: { models: ['*'], endpoints: ['*'], limits: { requests_per_minute: 1000 } } } },
    });
  }

  it('policy local: serves on local counters during the outage, logs it once each way, and counts in Redis again once it is back', async () => {
    await redis.start();
    const prefix = uniquePrefix();
    const log = new LogLines();
    gw = await start('local', prefix, log);
    const key = gw.keys.main!;

    const before = await chat(gw, key);
    expect(before.status).toBe(200);
    expectRateLimitHeaders(before, 1000);
    expect(await countersOf(redis.url, prefix, key)).toEqual([`${prefix}rl:{${keyIdOf(key)}}:rpm:*`]);

    await redis.stop();
    const during: Answer[] = [];
    for (let i = 0; i < 10; i++) during.push(await chat(gw, key));
    during.push(...(await Promise.all(Array.from({ length: 20 }, () => chat(gw!, key)))));
    // Let a few reconnection attempts fail too: none of them may log again.
    await sleep(700);
    for (let i = 0; i < 5; i++) during.push(await chat(gw, key));
    expect(during.map((a) => a.status)).toEqual(during.map(() => 200));
    for (const a of during) expectRateLimitHeaders(a, 1000);
    // Counted by this instance alone from zero: the request counted in Redis before is not there.
    expect(during.slice(0, 10).map((a) => a.headers.get('x-ratelimit-remaining'))).toEqual(Array.from({ length: 10 }, (_, i) => String(999 - i)));

    const outage = log.matching(WARN, UNAVAILABLE);
    expect(outage).toHaveLength(1);
    expect(log.lines.filter((l) => l.level >= WARN)).toEqual(outage);
    expect(outage[0]!.msg).toContain('rate limits are counted by each instance alone');
    expect(String(outage[0]!.redis)).toContain(`127.0.0.1:${redis.port}`);
    expect(log.matching(INFO, BACK)).toHaveLength(0);

    // The restarted server is empty: counters reappear only once the gateway uses it again.
    await redis.start();
    const back = Date.now();
    await until(
      async () => {
        const answer = await chat(gw!, key);
        expect(answer.status).toBe(200);
        return (await countersOf(redis.url, prefix, key)).length > 0;
      },
      8000,
      'requests to be counted in Redis again',
    );
    expect(Date.now() - back).toBeLessThan(5000);
    expect(log.matching(INFO, BACK)).toHaveLength(1);
    expect(log.lines.filter((l) => l.level >= WARN)).toHaveLength(1);

    // Counted in Redis from here on: two more requests are two more counts there.
    const sum = (): Promise<number> =>
      withRedis(redis.url, async (r) => (await r.hvals(`${prefix}rl:{${keyIdOf(key)}}:rpm:*`)).reduce((total, n) => total + Number(n), 0));
    const counted = await sum();
    expect((await chat(gw, key)).status).toBe(200);
    expect((await chat(gw, key)).status).toBe(200);
    expect(await sum()).toBe(counted + 2);
  });

  it('policy reject: answers 503 rate_limiter_unavailable while Redis is down and serves again once it is back', async () => {
    await redis.start();
    const prefix = uniquePrefix();
    const log = new LogLines();
    gw = await start('reject', prefix, log);
    const key = gw.keys.main!;
    expect((await chat(gw, key)).status).toBe(200);

    await redis.stop();
    const during: Answer[] = [];
    for (let i = 0; i < 5; i++) during.push(await chat(gw, key));
    during.push(...(await Promise.all(Array.from({ length: 15 }, () => chat(gw!, key)))));
    expect(during.map((a) => a.status)).toEqual(during.map(() => 503));
    for (const a of during) {
      expect(isEnvelope(a.body)).toBe(true);
      expect(a.body.error).toMatchObject({ type: 'service_unavailable', code: 'rate_limiter_unavailable', param: null });
      const retryAfter = a.headers.get('retry-after');
      expect(retryAfter).toMatch(/^\d+$/);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      expect(a.headers.get('x-should-retry')).toBe('true');
    }
    // What counts no limit is served on, without the headers it cannot read; a model's record, which reports the limits, is not.
    const auth = { authorization: `Bearer ${key}` };
    const unlimited = await Promise.all([`${gw.baseURL}/models`, `${gw.baseURL}/files`, `${gw.baseURL}/videos`].map((url) => fetch(url, { headers: auth })));
    expect(unlimited.map((res) => [res.status, res.headers.get('x-ratelimit-limit')])).toEqual(unlimited.map(() => [200, null]));
    expect((await fetch(`${gw.baseURL}/responses/resp_none/input_items`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${gw.baseURL}/models/mock-chat`, { headers: auth })).status).toBe(503);
    await sleep(300);
    const outage = log.matching(WARN, UNAVAILABLE);
    expect(outage).toHaveLength(1);
    expect(log.lines.filter((l) => l.level >= WARN)).toEqual(outage);
    expect(outage[0]!.msg).toContain('rate-limited requests are refused with 503');

    await redis.start();
    let last: Answer | undefined;
    await until(
      async () => {
        last = await chat(gw!, key);
        if (last.status !== 200) expect(last.body.error?.code).toBe('rate_limiter_unavailable');
        return last.status === 200;
      },
      10_000,
      'requests to be served again',
    );
    expectRateLimitHeaders(last!, 1000);
    expect(await countersOf(redis.url, prefix, key)).toHaveLength(1);
    expect(log.matching(INFO, BACK)).toHaveLength(1);
    expect(log.lines.filter((l) => l.level >= WARN)).toHaveLength(1);
  });

  it('a Redis too slow for one command: served locally, nothing leaks in Redis, and the next real outage is logged again', async () => {
    await redis.start();
    const prefix = uniquePrefix();
    const log = new LogLines();
    gw = await startGateway({
      limits: { redisUrl: redis.url, keyPrefix: prefix, onUnavailable: 'local' },
      logStream: log,
      config: { tiers: { standard: { models: ['*'], endpoints: ['*'], limits: { requests_per_minute: 1000, daily: { chat: 10 }, max_in_flight: 2 } } } },
    });
    const key = gw.keys.main!;
    expect((await chat(gw, key)).status).toBe(200);

    // Longer than the 250 ms command timeout: the admission script runs only after the pause.
    await withRedis(redis.url, (r) => r.call('CLIENT', 'PAUSE', '700'));
    expect((await chat(gw, key)).status).toBe(200);
    expect(log.matching(WARN, UNAVAILABLE)).toHaveLength(1);
    // Requests skip Redis for a second after a failed command, then try it again.
    await sleep(1200);
    expect((await chat(gw, key)).status).toBe(200);
    expect(log.matching(INFO, BACK)).toHaveLength(1);

    // The late admission was undone: no slot held, and only the two requests Redis answered count today.
    const limits = async (): Promise<{ daily: { remaining: number }; in_flight: { remaining: number } }> => {
      const res = await fetch(`${gw!.baseURL}/models/mock-chat`, { headers: { authorization: `Bearer ${key}` } });
      return ((await res.json()) as { limits: { daily: { remaining: number }; in_flight: { remaining: number } } }).limits;
    };
    await until(async () => (await limits()).in_flight.remaining === 2, 3000, 'the in-flight slots to be free');
    expect((await limits()).daily.remaining).toBe(8);

    await redis.stop();
    expect((await chat(gw, key)).status).toBe(200);
    expect(log.matching(WARN, UNAVAILABLE)).toHaveLength(2);
  });

  it('a connection cut while a request runs leaves no slot held in Redis', async () => {
    await redis.start();
    const prefix = uniquePrefix();
    gw = await startGateway({
      limits: { redisUrl: redis.url, keyPrefix: prefix, onUnavailable: 'local' },
      config: {
        providers: [{ id: 'slow', kind: 'mock', mock: { latency_ms: 400 } }],
        models: [{ id: 'mock-chat', capabilities: ['chat'], context_window: 4096, routes: [{ provider: 'slow', model: 'm' }] }],
        tiers: { standard: { models: ['*'], endpoints: ['*'], limits: { max_in_flight: 1 } } },
      },
    });
    const key = gw.keys.main!;
    const first = chat(gw, key);
    await sleep(150);
    // Cut the gateway's connection while the request runs; it settles over the new connection.
    await withRedis(redis.url, async (r) => {
      const clients = String(await r.call('CLIENT', 'LIST')).split('\n').filter((line) => line.includes('cmd=') && !line.includes('cmd=client'));
      for (const line of clients) await r.call('CLIENT', 'KILL', 'ID', /id=(\d+)/.exec(line)![1]!);
    });
    expect((await first).status).toBe(200);
    await until(async () => (await chat(gw!, key)).status === 200, 5000, 'the slot to be given back in Redis');
    const slots = await withRedis(redis.url, (r) => r.keys(`${prefix}rl:*:inflight:*`).then((keys) => Promise.all(keys.map((k) => r.zcard(k)))));
    expect(slots.reduce((a, b) => a + b, 0)).toBe(0);
  });
});
