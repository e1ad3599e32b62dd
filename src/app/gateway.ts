/**
 * Wiring: builds every part of a gateway from a validated configuration, inner layers first, and
 * tears them down in reverse. Nothing starts serving until every part is up, and a failure on the
 * way releases what was already opened, so the process never half-starts.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/schema.js';
import { parseSize } from '../config/size.js';
import { AccessLogWriter, type Logger } from '../logging/logger.js';
import { openStore } from '../storage/open-store.js';
import type { Store } from '../storage/types.js';
import { KeyCache, type Invalidation } from '../auth/key-cache.js';
import { RedisChannel } from '../storage/redis/redis-channel.js';
import { Authenticator } from '../auth/authenticator.js';
import { compileTier } from '../auth/principal.js';
import { ModelCatalog } from '../catalog/model-catalog.js';
import { createAdapters } from '../providers/registry.js';
import type { ProviderAdapter } from '../providers/types.js';
import { Router } from '../routing/router.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { ChatService } from '../core/chat-service.js';
import { UnaryService } from '../core/unary-service.js';
import { openMedia, type Media } from './open-media.js';
import { ModelLimits } from '../core/model-limits.js';
import { LimitPlans } from '../limits/plan.js';
import { openLimiter, type OpenedLimiter } from '../limits/open-limiter.js';
import { openBilling, type OpenedBilling } from '../billing/open-billing.js';
import { SettlementSpillDirectory } from '../billing/settlement-spill.js';
import { openIdempotency, type OpenedIdempotency } from '../idempotency/open-idempotency.js';
import { StoredResponses } from '../responses/stored-responses.js';
import { buildHttpServer } from '../http/server.js';
import { LoadShedder } from '../http/load-shedder.js';
import { InFlightWork } from '../http/in-flight-work.js';
import { Readiness } from '../http/readiness.js';
import { drainHttp } from '../http/drain.js';
import { bootstrapAccounts } from './bootstrap-accounts.js';

export const DEFAULT_BODY_LIMIT = 4 * 1024 * 1024;

export interface Gateway {
  readonly config: Config;
  readonly http: FastifyInstance;
  readonly store: Store;
  readonly keys: KeyCache;
  /** Starts listening; resolves with the address actually bound. */
  listen(port: number, host: string): Promise<{ host: string; port: number; url: string }>;
  /**
   * Drains (no new connections; requests in flight finish until `server.shutdown_timeout_ms`, then
   * are cut), then commits every settlement and closes the rest. Calling it again returns the same promise.
   */
  close(): Promise<void>;
}

export interface GatewayOptions {
  /** Where access lines go (default: standard output). */
  accessLogStream?: NodeJS.WritableStream;
  /** The clock of the in-memory rate limiter (default Date.now); tests use it to travel in time. */
  clock?: () => number;
}

export async function createGateway(config: Config, logger: Logger, options: GatewayOptions = {}): Promise<Gateway> {
  // The store opens before the metrics exist; its write pauses reach them once they do.
  let onWritePause: ((ms: number) => void) | null = null;
  const store = await openStore(config.storage.url, {
    onCheckpointProblem: (message) => logger.warn({ detail: message }, 'SQLite checkpoint'),
    onWritePause: (ms) => onWritePause?.(ms),
  });
  let adapters: Map<string, ProviderAdapter> | undefined;
  let limits: OpenedLimiter | undefined;
  let billing: OpenedBilling | undefined;
  let idempotency: OpenedIdempotency | undefined;
  let media: Media | undefined;
  let storedResponses: StoredResponses | undefined;
  let channel: RedisChannel<Invalidation> | undefined;
  let shedder: LoadShedder | undefined;
  try {
    await bootstrapAccounts(store, config.accounts);
    // Charges an earlier shutdown could not commit, before any balance is read.
    await new SettlementSpillDirectory(config.storage.spill_directory).recover(store, logger);
    adapters = createAdapters(config.providers, { connectTimeoutMs: config.upstream.connect_timeout_ms });
    const tiers = new Map(Object.entries(config.tiers).map(([name, tier]) => [name, compileTier(name, tier)]));
    const keys = new KeyCache(store);
    if (config.redis !== undefined) {
      channel = new RedisChannel<Invalidation>(config.redis.url, `${config.redis.key_prefix}invalidations`, logger);
      keys.onInvalidate = (invalidation) => channel?.publish(invalidation);
      await channel.subscribe((invalidation) => keys.drop(invalidation), () => keys.dropAll());
    }
    const catalog = new ModelCatalog(config.models, Math.floor(Date.now() / 1000));
    limits = await openLimiter(config, logger, options.clock);
    billing = openBilling(config, store, logger);
    idempotency = await openIdempotency(config, store, logger);
    media = await openMedia(config, store, billing.credits, adapters, logger);
    storedResponses = new StoredResponses(store, config.responses.retention_ms, logger);
    const plans = new LimitPlans(config.tiers);
    const router = new Router(config.models, adapters, config.routing);
    const metrics = config.metrics.enabled ? new GatewayMetrics(() => router.routes(), (id) => catalog.get(id) !== undefined) : null;
    if (metrics !== null) {
      billing.billing.onCharge = (model, micros) => metrics.charged(model, micros);
      billing.writer.observer = metrics.settlements;
      const writer = billing.writer;
      metrics.watchBacklog(() => writer.backlog);
      onWritePause = (ms) => metrics.storeWritePaused(ms);
    }
    const pipeline = {
      catalog,
      router,
      limiter: limits.limiter,
      plans,
      billing: billing.billing,
      deadlines: { budgetMs: config.generation.budget_ms, upstreamTimeoutMs: config.upstream.timeout_ms, idleTimeoutMs: config.upstream.idle_timeout_ms },
    };
    const chat = new ChatService({ ...pipeline, onInternalError: (requestId, err) => logger.error({ err, request_id: requestId }, 'unexpected fault in a stream') });
    const unary = new UnaryService(pipeline);
    // Access lines are info-level: a configured level above info turns them off with the rest.
    const accessLog = config.log.requests && ['info', 'debug', 'trace'].includes(config.log.level) ? new AccessLogWriter(options.accessLogStream) : null;
    shedder = new LoadShedder({ maxInFlight: config.server.max_in_flight, maxEventLoopDelayMs: config.server.max_event_loop_delay_ms, logger, bodyIdleTimeoutMs: config.server.body_idle_timeout_ms });
    const openShedder = shedder;
    if (metrics !== null) shedder.onShed = (reason) => metrics.shed.labels(reason).inc();
    const work = new InFlightWork(shedder);
    // The limiter's connection when limits live in Redis, else the invalidation channel's.
    const redis = limits.redis ?? channel ?? null;
    const readiness = new Readiness({
      store,
      redisReady: redis === null ? null : () => redis.ready,
      // With the `local` policy an instance serves on through a Redis outage, so it stays ready.
      redisRequired: config.limits.backend === 'redis' && config.limits.on_redis_unavailable === 'reject',
      routesAvailable: () => router.availability(),
      draining: () => openShedder.draining,
      logger,
    });
    const http = buildHttpServer({
      logger,
      accessLog,
      bodyLimit: config.server.body_limit === undefined ? DEFAULT_BODY_LIMIT : parseSize(config.server.body_limit),
      authenticator: new Authenticator(keys, tiers),
      catalog,
      chat,
      responses: storedResponses,
      unary,
      assets: media.assets,
      files: media.files,
      videos: media.videos,
      uploads: { blobs: media.assets.blobs, maxBytes: parseSize(config.uploads.max_bytes), contentTypes: media.contentTypes, idleTimeoutMs: config.server.body_idle_timeout_ms },
      assetRetentionMs: config.blobs.retention_ms,
      publicUrl: config.server.public_url,
      limits: new ModelLimits(limits.limiter, plans),
      shedder,
      work,
      readiness,
      metrics,
      idempotency: { idempotency: idempotency.idempotency, limiter: limits.limiter, plans },
      admin: { store, keys, credits: billing.credits, tiers: Object.keys(config.tiers), adminToken: config.server.admin_token },
    });
    const openAdapters = adapters;
    const openLimits = limits;
    const openBillingParts = billing;
    const openIdempotencyParts = idempotency;
    const openedMedia = media;
    const openStoredResponses = storedResponses;
    const openChannel = channel;
    let closing: Promise<void> | undefined;
    return {
      config,
      http,
      store,
      keys,
      async listen(port, host) {
        await http.listen({ port, host });
        const address = http.server.address();
        const bound = typeof address === 'object' && address !== null ? address.port : port;
        const shownHost = host.includes(':') ? `[${host}]` : host;
        return { host, port: bound, url: `http://${shownHost}:${bound}` };
      },
      close() {
        closing ??= (async () => {
          await drainHttp({ app: http, shedder: openShedder, work, timeoutMs: config.server.shutdown_timeout_ms, logger });
          openShedder.stop();
          accessLog?.close();
          // After the server stopped taking requests: every settlement is committed (or spilled)
          // before the store closes. A failure of that is reported once everything else closed.
          const settlementFailure = await openBillingParts.close().then(
            () => null,
            (err: unknown) => ({ err }),
          );
          // After the settlements: claims are given back once their records are committed.
          await openIdempotencyParts.close();
          await openedMedia.close();
          await openStoredResponses.close();
          await openLimits.close();
          await openChannel?.close();
          await Promise.allSettled([...openAdapters.values()].map((a) => a.close()));
          await store.close();
          if (settlementFailure !== null) throw settlementFailure.err;
        })();
        return closing;
      },
    };
  } catch (err) {
    shedder?.stop();
    if (adapters) await Promise.allSettled([...adapters.values()].map((a) => a.close()));
    await limits?.close();
    await billing?.close();
    await idempotency?.close();
    await media?.close();
    await storedResponses?.close();
    await channel?.close();
    await store.close().catch(() => undefined);
    throw err;
  }
}
