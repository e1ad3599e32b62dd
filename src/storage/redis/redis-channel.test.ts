/**
 * The channel against a Redis of its own that starts only after the subscription was asked for,
 * as when an instance starts during a short Redis outage: messages must still arrive once Redis
 * is up, and the subscriber is told that it may have missed some.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { RedisChannel } from './redis-channel.js';

const logger = pino({ level: 'silent' });
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('RedisChannel', () => {
  it('subscribes once Redis comes up, however late, and says messages may have been missed', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const listener = new RedisChannel<{ n: number }>(url, 'test-channel', logger);
    cleanups.push(() => listener.close());
    const got: number[] = [];
    let missed = 0;
    await listener.subscribe((m) => got.push(m.n), () => missed++, 100);

    const server: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    cleanups.push(() => void server.kill('SIGKILL'));
    await until(() => listener.ready);
    const sender = new RedisChannel<{ n: number }>(url, 'test-channel', logger);
    cleanups.push(() => sender.close());
    await until(() => sender.ready);

    let n = 0;
    await until(() => {
      sender.publish({ n: ++n });
      return got.length > 0;
    });
    expect(missed).toBeGreaterThanOrEqual(1);
  });
});
