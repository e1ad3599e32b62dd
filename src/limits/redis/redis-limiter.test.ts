/** The Redis limiter's own logic, over a stand-in connection; the scripts themselves run against the real Redis in test/http. */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { LimitPlans, replayPlan } from '../plan.js';
import { RedisLimiter } from './redis-limiter.js';
import type { RedisConnection } from '../../storage/redis/redis-connection.js';

const plan = new LimitPlans({ t: { models: ['*'], endpoints: ['*'], limits: { daily: { chat: 10 }, max_in_flight: 5, tokens_per_minute: 1000 }, model_limits: [] } }).planFor('t', 'm', 'chat');

/** A connection whose settle command fails as often as told, and records what it was sent. */
function standIn(failures: number) {
  const client = Object.assign(new EventEmitter(), {
    defineCommand: () => undefined,
    settles: [] as unknown[][],
    tollgateAdmit: () => Promise.resolve([1, Date.now(), 0, 100, 0, 1, [], []]),
    tollgateSettle: (...args: unknown[]) => {
      client.settles.push(args);
      return failures-- > 0 ? Promise.reject(new Error('Connection is closed.')) : Promise.resolve(1);
    },
  });
  const connection = { client, markDown: () => undefined } as unknown as RedisConnection;
  return { client, limiter: new RedisLimiter(connection, { keyPrefix: 'p:', inFlightTtlMs: 1000 }) };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('RedisLimiter settlements', () => {
  it('keeps a settlement that failed and sends it again when the connection is ready', async () => {
    const { client, limiter } = standIn(1);
    const admission = await limiter.admit({ keyId: 'k', requestId: 'r1', plan, tokens: 100 });
    admission.settle({ tokens: 40, failed: false });
    await tick();
    expect(client.settles).toHaveLength(1);
    client.emit('ready');
    await tick();
    expect(client.settles).toHaveLength(2);
    expect(client.settles[1]).toEqual(client.settles[0]);
    expect(client.settles[1]?.slice(3, 6)).toEqual(['r1', -60, '0']);
  });

  it('sends the kept settlements after the next answer from Redis too', async () => {
    const { client, limiter } = standIn(1);
    (await limiter.admit({ keyId: 'k', requestId: 'r1', plan, tokens: 100 })).settle({ tokens: null, failed: true });
    await tick();
    await limiter.admit({ keyId: 'k', requestId: 'r2', plan, tokens: 100 });
    await tick();
    expect(client.settles.map((a) => a[3])).toEqual(['r1', 'r1']);
  });

  it('undoes an admission whose answer was lost', async () => {
    const { client, limiter } = standIn(0);
    client.tollgateAdmit = () => Promise.reject(new Error('Command timed out'));
    await expect(limiter.admit({ keyId: 'k', requestId: 'r3', plan, tokens: 100 })).rejects.toThrow('timed out');
    await tick();
    expect(client.settles[0]?.slice(3, 6)).toEqual(['r3', -100, '1']);
  });

  it('undoes only what the plan counted: a lost replay gives back no daily count and no tokens it never took', async () => {
    const { client, limiter } = standIn(0);
    client.tollgateAdmit = () => Promise.reject(new Error('Command timed out'));
    const replay = { ...replayPlan(plan), tokensPerMinute: null };
    await expect(limiter.admit({ keyId: 'k', requestId: 'r4', plan: replay, tokens: 100 })).rejects.toThrow('timed out');
    await tick();
    expect(client.settles[0]?.slice(3, 6)).toEqual(['r4', 0, '0']);
  });
});
