/** Builds the configured idempotency parts: claims in memory (one instance) or in Redis (several). */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Store } from '../storage/types.js';
import { RedisConnection } from '../storage/redis/redis-connection.js';
import { Idempotency } from './idempotency.js';
import { MemoryClaims } from './memory-claims.js';
import { RedisClaims } from './redis-claims.js';

const SWEEP_EVERY_MS = 60_000;

export interface OpenedIdempotency {
  readonly idempotency: Idempotency;
  close(): Promise<void>;
}

export async function openIdempotency(config: Config, store: Store, logger: Logger): Promise<OpenedIdempotency> {
  const settings = { lifetimeMs: config.idempotency.lifetime_ms, sweepEveryMs: SWEEP_EVERY_MS };
  const redisConfig = config.redis;
  if (config.idempotency.backend === 'memory' || redisConfig === undefined) {
    if (!config.storage.url.startsWith('sqlite://')) {
      logger.warn('idempotency.backend is memory: Idempotency-Key claims are not shared, so two instances may both run a resend that arrives while the first is running; set idempotency.backend to redis when running several instances');
    }
    const idempotency = new Idempotency(store, new MemoryClaims(), settings, logger);
    void idempotency.sweep();
    return { idempotency, close: () => idempotency.close() };
  }
  const connection = await RedisConnection.open(redisConfig, 'requests with an Idempotency-Key are refused with 503', logger);
  const idempotency = new Idempotency(store, new RedisClaims(connection, redisConfig.key_prefix, logger), settings, logger);
  void idempotency.sweep();
  return {
    idempotency,
    async close() {
      await idempotency.close();
      await connection.close();
    },
  };
}
