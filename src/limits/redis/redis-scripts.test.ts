/**
 * The Lua scripts against the machine's real Redis, for what only several instances see: two
 * limiters on one prefix, as two gateways would be, each with its own configuration.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { LimitPlans } from '../plan.js';
import { RedisLimiter } from './redis-limiter.js';
import { RedisConnection } from '../../storage/redis/redis-connection.js';
import { REDIS_URL, clearPrefix, redisAvailable, uniquePrefix } from '../../../test/support/redis.js';

const available = await redisAvailable();
const logger = pino({ level: 'silent' });
const plan = new LimitPlans({ t: { models: ['*'], endpoints: ['*'], limits: { daily: {}, max_in_flight: 3 }, model_limits: [] } }).planFor('t', 'm', 'chat');

describe.skipIf(!available)('Redis limit scripts shared by instances', () => {
  const prefix = uniquePrefix();
  let connection: RedisConnection;

  beforeAll(async () => {
    connection = await RedisConnection.open({ url: REDIS_URL, command_timeout_ms: 1_000 }, 'tests fail', logger);
  });

  afterAll(async () => {
    connection.client.disconnect();
    await clearPrefix(prefix);
  });

  it('an instance giving slots a shorter lifetime does not cut the slots of one giving a longer one', async () => {
    const long = new RedisLimiter(connection, { keyPrefix: prefix, inFlightTtlMs: 600_000 });
    const short = new RedisLimiter(connection, { keyPrefix: prefix, inFlightTtlMs: 2_000 });
    await long.admit({ keyId: 'k', requestId: 'a1', plan, tokens: 0 });
    await long.admit({ keyId: 'k', requestId: 'a2', plan, tokens: 0 });
    (await short.admit({ keyId: 'k', requestId: 'b1', plan, tokens: 0 })).settle({ tokens: null, failed: false });
    const slots = (await connection.client.keys(`${prefix}*`)).find((key) => key.includes(":inflight:"));
    expect(slots).toBeDefined();
    expect(await connection.client.pttl(slots!)).toBeGreaterThan(590_000);
    // The two long requests still hold their slots: one more fits under the cap of three, not two.
    await short.admit({ keyId: 'k', requestId: 'b2', plan, tokens: 0 });
    await expect(short.admit({ keyId: 'k', requestId: 'b3', plan, tokens: 0 })).rejects.toMatchObject({ code: 'too_many_requests_in_flight' });
  });
});
