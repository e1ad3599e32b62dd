/**
 * A Redis pub/sub channel of JSON messages between the instances of one deployment, e.g. "drop
 * this key from your cache". Subscribing needs a connection of its own. Messages an instance
 * sent itself are not delivered back to it. Delivery is best effort: a message sent while an
 * instance is disconnected is lost to it, which is why what it carries (cache invalidations) also
 * expires by itself.
 */
import { closeRedis } from './close-redis.js';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export class RedisChannel<T> {
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly origin = randomUUID();

  constructor(
    url: string,
    private readonly name: string,
    private readonly logger: Logger,
  ) {
    const options = { maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: (attempt: number) => Math.min(100 * attempt, 2_000) };
    this.publisher = new Redis(url, options);
    this.subscriber = new Redis(url, { ...options, enableOfflineQueue: true });
    // Outages are reported by the rate limiter's connection; here they only cost a late message.
    this.publisher.on('error', () => undefined);
    this.subscriber.on('error', () => undefined);
  }

  /**
   * Starts delivering messages from other instances to `handle`. Resolves once subscribed, or
   * after `waitMs` if Redis is not reachable yet: the subscription is made again on every
   * connection (ioredis renews only subscriptions it saw confirmed, so one first sent while Redis
   * was down would be lost for good), and `missed` is told of every reconnection, since what was
   * sent meanwhile never arrives.
   */
  async subscribe(handle: (message: T) => void, missed: () => void = () => undefined, waitMs = 3_000): Promise<void> {
    // Every 'ready' from here on is a connection made after messages may have gone by unheard.
    this.subscriber.on('ready', () => {
      // Told once subscribed again: a message sent between the two would otherwise be lost after the telling.
      this.subscriber.subscribe(this.name).then(missed, (err: unknown) => this.couldNotSubscribe(err));
    });
    this.subscriber.on('message', (_channel: string, text: string) => {
      try {
        const envelope = JSON.parse(text) as { origin: string; message: T };
        if (envelope.origin !== this.origin) handle(envelope.message);
      } catch (err) {
        this.logger.warn({ err, channel: this.name }, 'ignored a malformed message on a Redis channel');
      }
    });
    let timer: NodeJS.Timeout | undefined;
    const subscribed = this.subscriber.subscribe(this.name).then(
      () => undefined,
      (err: unknown) => this.couldNotSubscribe(err),
    );
    await Promise.race([subscribed, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }

  private couldNotSubscribe(err: unknown): void {
    this.logger.warn({ err: err instanceof Error ? err.message : String(err), channel: this.name }, 'could not subscribe to a Redis channel; trying again when connected');
  }

  /** Whether both connections are up (for the readiness probe when Redis carries only this channel). */
  get ready(): boolean {
    return this.publisher.status === 'ready' && this.subscriber.status === 'ready';
  }

  publish(message: T): void {
    this.publisher.publish(this.name, JSON.stringify({ origin: this.origin, message })).catch((err: unknown) => {
      this.logger.warn({ err: err instanceof Error ? err.message : String(err), channel: this.name }, 'could not publish to a Redis channel; other instances see the change when their cache entry expires');
    });
  }

  async close(): Promise<void> {
    await Promise.all([closeRedis(this.publisher), closeRedis(this.subscriber)]);
  }
}
