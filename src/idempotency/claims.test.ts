/** Both claims backends, the Redis one against the machine's real Redis with real concurrency. */
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryClaims } from './memory-claims.js';
import { RedisClaims } from './redis-claims.js';
import type { IdempotencyClaims } from './claims.js';
import { RedisConnection } from '../storage/redis/redis-connection.js';
import { createLogger } from '../logging/logger.js';
import { REDIS_URL, clearPrefix, redisAvailable, uniquePrefix } from '../../test/support/redis.js';

const available = await redisAvailable();
const logger = createLogger('silent');
const prefix = uniquePrefix();
const connections: RedisConnection[] = [];

async function redisClaims(): Promise<RedisClaims> {
  const connection = new RedisConnection({ url: REDIS_URL, commandTimeoutMs: 1_000, outageEffect: 'test' }, logger);
  connections.push(connection);
  await connection.waitReady(2_000);
  return new RedisClaims(connection, prefix, logger);
}

afterAll(async () => {
  await Promise.all(connections.map((c) => c.close()));
  if (available) await clearPrefix(prefix);
});

function behaves(name: string, open: () => Promise<IdempotencyClaims[]>): void {
  describe(`${name} claims`, () => {
    it('gives a key to one claimant and names it to the others', async () => {
      const [claims] = await open();
      expect(await claims!.claim('k1', { requestId: 'req_a', fingerprint: 'fa' })).toEqual({ claimed: true });
      expect(await claims!.claim('k1', { requestId: 'req_b', fingerprint: 'fb' })).toEqual({ claimed: false, holder: { requestId: 'req_a', fingerprint: 'fa' } });
    });

    it('is released by its holder only, then claimable again', async () => {
      const [claims] = await open();
      await claims!.claim('k2', { requestId: 'req_a', fingerprint: 'f' });
      await claims!.release('k2', 'req_other');
      expect((await claims!.claim('k2', { requestId: 'req_b', fingerprint: 'f' })).claimed).toBe(false);
      await claims!.release('k2', 'req_a');
      expect((await claims!.claim('k2', { requestId: 'req_b', fingerprint: 'f' })).claimed).toBe(true);
    });

    it('gives a key to exactly one of many concurrent claimants, across instances', async () => {
      const instances = await open();
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => Promise.resolve(instances[i % instances.length]!.claim('storm', { requestId: `req_${i}`, fingerprint: 'f' }))),
      );
      const winners = results.filter((r) => r.claimed);
      expect(winners).toHaveLength(1);
      const holders = new Set(results.flatMap((r) => (r.claimed ? [] : [r.holder.requestId])));
      expect(holders.size).toBe(1);
    });
  });
}

behaves('memory', () => Promise.resolve([new MemoryClaims()]));

describe.runIf(available)('Redis', () => {
  behaves('Redis', async () => [await redisClaims(), await redisClaims(), await redisClaims()]);

  it('sets a claim to expire within 30 s, so that a dead holder’s claim frees itself', async () => {
    const claims = await redisClaims();
    await claims.claim('ttl', { requestId: 'req_a', fingerprint: 'f' });
    const ttl = await connections.at(-1)!.client.pttl(`${prefix}idem:{ttl}`);
    expect(ttl).toBeGreaterThan(25_000);
    expect(ttl).toBeLessThanOrEqual(30_000);
  });

  it('sends the releases already asked for before its connection closes', async () => {
    const claims = await redisClaims();
    const connection = connections.at(-1)!;
    await claims.claim('closing', { requestId: 'req_a', fingerprint: 'f' });
    // Not awaited, as a request's end does not wait for its claim to be given back.
    void claims.release('closing', 'req_a');
    await claims.close();
    await connection.close();
    const other = await redisClaims();
    expect((await other.claim('closing', { requestId: 'req_b', fingerprint: 'f' })).claimed).toBe(true);
  });

  it('refuses with 503 while Redis is unreachable', async () => {
    const connection = new RedisConnection({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 100, outageEffect: 'test' }, logger);
    connections.push(connection);
    const claims = new RedisClaims(connection, prefix, logger);
    await expect(claims.claim('x', { requestId: 'r', fingerprint: 'f' })).rejects.toMatchObject({ status: 503, code: 'idempotency_unavailable' });
    await claims.close();
  });
});
