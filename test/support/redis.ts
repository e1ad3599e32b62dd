/**
 * Redis for tests: the machine's real server (127.0.0.1:6379). Every gateway a test starts uses a
 * key prefix of its own, so tests never see each other's counters. Under CI=true an unreachable
 * server fails the run instead of skipping the tests.
 */
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.TOLLGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export async function redisAvailable(url = REDIS_URL): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch (err) {
    if (process.env.CI === 'true') throw new Error(`Redis is required under CI=true but is not reachable at ${url}: ${String(err)}`);
    return false;
  } finally {
    client.disconnect();
  }
}

export function uniquePrefix(): string {
  return `tollgate-test:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`;
}

/** Deletes every key under a prefix. */
export async function clearPrefix(prefix: string, url = REDIS_URL): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 0 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}
