/** Builds the configured rate limiter: memory for one instance, Redis for several. */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { longestBudgetMs } from '../config/longest-budget.js';
import { RedisConnection } from '../storage/redis/redis-connection.js';
import { MemoryLimiter } from './memory-limiter.js';
import { RedisLimiter } from './redis/redis-limiter.js';
import { SharedLimiter } from './shared-limiter.js';
import type { RateLimiter } from './types.js';

/** In-flight slots outlive the longest request by this much before a dead instance's slot frees itself. */
const IN_FLIGHT_MARGIN_MS = 60_000;

export interface OpenedLimiter {
  readonly limiter: RateLimiter;
  /** The shared Redis connection's state, for the readiness probe; null for the memory backend. */
  readonly redis: Pick<RedisConnection, 'ready'> | null;
  close(): Promise<void>;
}

export async function openLimiter(config: Config, logger: Logger, clock: () => number = Date.now): Promise<OpenedLimiter> {
  const redisConfig = config.redis;
  if (config.limits.backend === 'memory' || redisConfig === undefined) {
    if (!config.storage.url.startsWith('sqlite://')) {
      // A shared store says several instances may run: each would admit a tier's whole limit.
      logger.warn('limits.backend is memory: rate limits are counted by each instance alone, so N instances admit N times a tier\'s limits; set limits.backend to redis when running several instances');
    }
    const limiter = new MemoryLimiter(clock);
    return { limiter, redis: null, close: () => limiter.close() };
  }
  const policy = config.limits.on_redis_unavailable;
  const connection = await RedisConnection.open(
    redisConfig,
    policy === 'local' ? 'rate limits are counted by each instance alone' : 'rate-limited requests are refused with 503',
    logger,
  );
  const shared = new RedisLimiter(connection, {
    keyPrefix: redisConfig.key_prefix,
    inFlightTtlMs: longestBudgetMs(config) + IN_FLIGHT_MARGIN_MS,
  });
  const limiter = new SharedLimiter(connection, shared, new MemoryLimiter(clock), policy);
  return {
    limiter,
    redis: connection,
    async close() {
      await limiter.close();
      await connection.close();
    },
  };
}
