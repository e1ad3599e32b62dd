import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { closeRedis } from './close-redis.js';
import { freePort } from '../../../test/support/ports.js';

describe('closeRedis', () => {
  it('closes at once a client whose Redis is gone, even one that queues commands while offline', async () => {
    const client = new Redis(`redis://127.0.0.1:${await freePort()}`, { enableOfflineQueue: true, maxRetriesPerRequest: null, retryStrategy: () => 50 });
    client.on('error', () => undefined);
    await new Promise((r) => setTimeout(r, 200));
    // QUIT on such a client waited for a connection that never came: this await never ended.
    await closeRedis(client);
    // And the client stops trying (it retried every 50 ms), so nothing keeps the process alive.
    let attempts = 0;
    client.on('reconnecting', () => attempts++);
    await new Promise((r) => setTimeout(r, 300));
    expect(attempts).toBe(0);
  });
});
