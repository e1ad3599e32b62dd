/**
 * A connection whose Redis falls silent without closing it (a vanished server, NAT or virtual IP
 * in between), simulated by a proxy that stops forwarding on the connections it already has: the
 * connection must be replaced, not left "ready" while every command times out.
 */
import { createConnection, createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { RedisConnection } from './redis-connection.js';
import { freePort } from '../../../test/support/ports.js';
import { PrivateRedis, privateRedisMissing, until } from '../../../test/support/private-redis.js';

const logger = pino({ level: 'silent' });
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Forwards to `port`; `freeze()` stops forwarding on the connections open now, leaving them open. */
async function silencingProxy(port: number): Promise<{ port: number; freeze: () => void; close: () => Promise<void> }> {
  const pairs: Array<[Socket, Socket]> = [];
  const server = createServer((client) => {
    const upstream = createConnection(port, '127.0.0.1');
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    pairs.push([client, upstream]);
  });
  const listenPort = await freePort();
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  return {
    port: listenPort,
    freeze: () => {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    close: async () => {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(privateRedisMissing('redis-connection.test.ts') !== null)('RedisConnection', () => {
  it('replaces a connection that went silent without closing', async () => {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    cleanups.push(() => redis.stop());
    const proxy = await silencingProxy(redis.port);
    cleanups.push(() => proxy.close());
    const connection = await RedisConnection.open({ url: `redis://127.0.0.1:${proxy.port}`, command_timeout_ms: 100 }, 'nothing', logger);
    cleanups.push(() => connection.close());
    expect(await connection.client.ping()).toBe('PONG');
    const first = connection.readyCount;

    proxy.freeze();
    await expect(connection.client.ping()).rejects.toThrow();
    // Within the silence limit (2 s here) the socket is given up and a new one made, through the proxy again.
    await until(() => Promise.resolve(connection.readyCount > first), 6_000, 'a fresh connection');
    expect(await connection.client.ping()).toBe('PONG');
  });
});
