/**
 * Retry-After is honest (spec 8, rule 2): a client that waits exactly what it was told is admitted.
 * The memory backend is driven by a clock the test moves; the Redis backend uses Redis's own
 * clock, so that test waits the minute out in real time.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { clearPrefix, redisAvailable, uniquePrefix } from '../support/redis.js';

const tiers = { standard: { models: ['*'], endpoints: ['*'], limits: { requests_per_minute: 2 } } };
const running: RunningGateway[] = [];
const prefix = uniquePrefix();
afterAll(async () => {
  await Promise.all(running.map((gw) => gw.close()));
  await clearPrefix(prefix).catch(() => undefined);
});

function chat(gw: RunningGateway): Promise<Response> {
  return fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

describe('Retry-After', () => {
  it('admits a client that waits it out (memory backend, moved clock)', async () => {
    let now = Date.UTC(2026, 10, 22, 9, 0, 0, 400);
    const gw = await startGateway({ config: { tiers }, clock: () => now });
    running.push(gw);
    expect((await chat(gw)).status).toBe(200);
    now += 20_000;
    expect((await chat(gw)).status).toBe(200);
    now += 5_000;
    const refused = await chat(gw);
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get('retry-after'));
    // The refused request counts too: both admitted ones must leave (at 20 s + 60 s).
    expect(wait).toBe(55);
    now += wait * 1000;
    expect((await chat(gw)).status).toBe(200);
  });

  it('admits a client that waits it out (Redis backend, real minute)', { timeout: 90_000 }, async () => {
    expect(await redisAvailable()).toBe(true);
    const gw = await startGateway({ config: { tiers }, limits: { keyPrefix: prefix } });
    running.push(gw);
    expect((await chat(gw)).status).toBe(200);
    expect((await chat(gw)).status).toBe(200);
    const refused = await chat(gw);
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(59);
    expect(wait).toBeLessThanOrEqual(60);
    await new Promise((r) => setTimeout(r, wait * 1000));
    expect((await chat(gw)).status).toBe(200);
  });
});
