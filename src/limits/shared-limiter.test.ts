import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/index.js';
import type { RedisConnection } from '../storage/redis/redis-connection.js';
import { LimitPlans } from './plan.js';
import { SharedLimiter } from './shared-limiter.js';
import type { Admission, AdmissionRequest, LimitsView, RateLimiter } from './types.js';

/** A connection whose state the test moves by hand, recording what it was told. */
class FakeConnection {
  ready = true;
  readyCount = 1;
  down = false;
  readonly events: string[] = [];
  get status(): string {
    return this.ready ? 'ready' : 'reconnecting';
  }
  markDown(): void {
    if (this.down) return;
    this.down = true;
    this.events.push('down');
  }
  markUp(): void {
    if (!this.down) return;
    this.down = false;
    this.events.push('up');
  }
  reconnect(): void {
    this.ready = true;
    this.readyCount++;
    this.markUp();
  }
}

/** A backend that answers or fails as told, counting its admissions. */
class ScriptedLimiter implements RateLimiter {
  admissions = 0;
  failing = false;
  admit(): Promise<Admission> {
    if (this.failing) return Promise.reject(new Error('Connection is closed.'));
    this.admissions++;
    return Promise.resolve({ headers: {}, settle: () => undefined });
  }
  peek(): Promise<LimitsView> {
    return Promise.reject(new Error('not used'));
  }
  async close(): Promise<void> {}
}

const plan = new LimitPlans({ t: { models: ['*'], endpoints: ['*'], limits: { requests_per_minute: 10, daily: {} }, model_limits: [] } }).planFor('t', 'm', 'chat');
const request = (n: number): AdmissionRequest => ({ keyId: 'k', requestId: `r${n}`, plan, tokens: 0 });

function setup(policy: 'local' | 'reject') {
  const connection = new FakeConnection();
  const shared = new ScriptedLimiter();
  const local = new ScriptedLimiter();
  const limiter = new SharedLimiter(connection as unknown as RedisConnection, shared, local, policy);
  return { connection, shared, local, limiter };
}

describe('SharedLimiter', () => {
  it('a failed command backs off to local counters, logging the outage once', async () => {
    const { connection, shared, local, limiter } = setup('local');
    shared.failing = true;
    await limiter.admit(request(1));
    shared.failing = false;
    // Within the back-off the connection still looks up, but Redis is not tried again.
    await limiter.admit(request(2));
    await limiter.admit(request(3));
    expect(shared.admissions).toBe(0);
    expect(local.admissions).toBe(3);
    expect(connection.events).toEqual(['down']);
  });

  it('a reconnection inside the back-off ends it at once, and the outage is not logged a second time', async () => {
    const { connection, shared, limiter } = setup('reject');
    shared.failing = true;
    await expect(limiter.admit(request(1))).rejects.toBeInstanceOf(GatewayError);
    connection.ready = false;
    await expect(Promise.resolve().then(() => limiter.admit(request(2)))).rejects.toMatchObject({ code: 'rate_limiter_unavailable' });
    shared.failing = false;
    connection.reconnect();
    await limiter.admit(request(3));
    await limiter.admit(request(4));
    expect(shared.admissions).toBe(2);
    expect(connection.events).toEqual(['down', 'up']);
  });
});
