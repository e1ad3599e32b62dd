/**
 * The channel against a Redis of its own that starts only after the subscription was asked for,
 * as when an instance starts during a short Redis outage: messages must still arrive once Redis
 * is up, and the subscriber is told that it may have missed some.
 */
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { RedisChannel } from './redis-channel.js';
import { freePort } from '../../../test/support/ports.js';
import { PrivateRedis, privateRedisMissing, until } from '../../../test/support/private-redis.js';

const logger = pino({ level: 'silent' });
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(privateRedisMissing('redis-channel.test.ts') !== null)('RedisChannel', () => {
  it('subscribes once Redis comes up, however late, and says messages may have been missed', async () => {
    const redis = new PrivateRedis(await freePort());
    const listener = new RedisChannel<{ n: number }>(redis.url, 'test-channel', logger);
    cleanups.push(() => listener.close());
    const got: number[] = [];
    let missed = 0;
    await listener.subscribe((m) => got.push(m.n), () => missed++, 100);

    await redis.start();
    cleanups.push(() => redis.stop());
    const sender = new RedisChannel<{ n: number }>(redis.url, 'test-channel', logger);
    cleanups.push(() => sender.close());
    await until(() => Promise.resolve(listener.ready && sender.ready), 5_000, 'both channels to connect');
    let n = 0;
    await until(
      () => {
        sender.publish({ n: ++n });
        return Promise.resolve(got.length > 0);
      },
      5_000,
      'a message to arrive',
    );
    expect(missed).toBeGreaterThanOrEqual(1);
  });
});
