/**
 * Several instances on one store and one Redis: a key disabled or an account's tier changed
 * through one instance's admin API applies on every instance at once, not after their key caches
 * expire (shared/guides/DISTRIBUTED.md: revocation through PostgreSQL plus a Redis message).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { freshSchemaUrl, postgresAvailable } from '../support/postgres.js';
import { clearPrefix, redisAvailable, uniquePrefix } from '../support/redis.js';

const ADMIN = 'admin-token-for-invalidation-tests';
const prefix = uniquePrefix();
const instances: RunningGateway[] = [];

beforeAll(async () => {
  expect(await postgresAvailable()).toBe(true);
  expect(await redisAvailable()).toBe(true);
  const storage = await freshSchemaUrl();
  const tiers = { standard: { limits: { requests_per_minute: 1000 } }, small: { limits: { requests_per_minute: 2 } } };
  const config = { storage: { url: storage }, server: { admin_token: ADMIN }, tiers };
  const first = await startGateway({ config, limits: { keyPrefix: prefix } });
  instances.push(first);
  instances.push(await startGateway({ config, limits: { keyPrefix: prefix }, presetKeys: { main: first.keys.main! } }));
});

afterAll(async () => {
  await Promise.all(instances.map((gw) => gw.close()));
  await clearPrefix(prefix);
});

function chat(gw: RunningGateway): Promise<Response> {
  return fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

function admin(gw: RunningGateway, method: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${gw.url}/admin/v1${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('cache invalidation across instances', () => {
  it('applies a tier change made through one instance on the other at once', async () => {
    const [a, b] = instances as [RunningGateway, RunningGateway];
    expect((await chat(b)).headers.get('x-ratelimit-limit')).toBe('1000');
    expect((await admin(a, 'PATCH', '/accounts/acct', { tier: 'small' })).status).toBe(200);
    await expect.poll(async () => (await chat(b)).headers.get('x-ratelimit-limit'), { timeout: 1000, interval: 20 }).toBe('2');
  });

  it('refuses a key disabled through one instance on the other at once', async () => {
    const [a, b] = instances as [RunningGateway, RunningGateway];
    await admin(a, 'PATCH', '/accounts/acct', { tier: 'standard' });
    await expect.poll(async () => (await chat(b)).status, { timeout: 1000, interval: 20 }).toBe(200);
    const keyId = a.keys.main!.split('-')[2];
    expect((await admin(a, 'PATCH', `/keys/${keyId}`, { status: 'disabled' })).status).toBe(200);
    await expect.poll(async () => (await chat(b)).status, { timeout: 1000, interval: 20 }).toBe(401);
    expect((await chat(a)).status).toBe(401);
  });
});
