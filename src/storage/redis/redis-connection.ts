/**
 * One connection to the shared Redis, for the parts that keep state across instances (rate
 * limits now). Commands fail at once while the connection is down instead of queueing, so that a
 * caller can fall back without waiting; ioredis keeps reconnecting in the background. An outage is
 * logged once when it starts and once when it ends, never per request.
 */
import { closeRedis } from './close-redis.js';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export interface RedisConnectionOptions {
  readonly url: string;
  readonly commandTimeoutMs: number;
  /** What the log lines say depends on Redis during an outage, e.g. "rate limits fall back to local counters". */
  readonly outageEffect: string;
}

/** How long start-up waits for Redis before serving on each part's outage policy. */
const STARTUP_WAIT_MS = 3_000;

/**
 * A connection that has sent commands and heard nothing back for this long (and at least 2 s) is
 * taken for dead and replaced. Command timeouts alone fail the commands but keep the socket: a
 * Redis (or a NAT or virtual IP before it) that vanished without closing the connection would
 * otherwise leave every request failing on a connection that still says "ready", until the
 * kernel gives up on it some fifteen minutes later.
 */
function silenceLimitMs(commandTimeoutMs: number): number {
  return Math.max(2_000, 10 * commandTimeoutMs);
}

export class RedisConnection {
  /**
   * Connects and waits for the first connection at most STARTUP_WAIT_MS, so that a gateway
   * starting beside a healthy Redis uses it from its first request; past that, an unreachable
   * Redis is an outage like any other.
   */
  static async open(config: { url: string; command_timeout_ms: number }, outageEffect: string, logger: Logger): Promise<RedisConnection> {
    const connection = new RedisConnection({ url: config.url, commandTimeoutMs: config.command_timeout_ms, outageEffect }, logger);
    if (!(await connection.waitReady(STARTUP_WAIT_MS))) connection.markDown(new Error(`no connection within ${STARTUP_WAIT_MS} ms of start`));
    return connection;
  }

  readonly client: Redis;
  private down = false;
  private connections = 0;
  private readonly effect: string;
  private readonly target: string;

  constructor(
    options: RedisConnectionOptions,
    private readonly logger: Logger,
  ) {
    this.client = new Redis(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs,
      socketTimeout: silenceLimitMs(options.commandTimeoutMs),
      connectTimeout: Math.max(1_000, options.commandTimeoutMs),
      enableAutoPipelining: true,
      retryStrategy: (attempt) => Math.min(100 * attempt, 2_000),
    });
    this.effect = options.outageEffect;
    this.target = redactedUrl(options.url);
    // Without a listener ioredis reports every failed reconnection attempt as an unhandled error.
    this.client.on('error', (err: Error) => this.markDown(err));
    this.client.on('close', () => this.markDown(new Error('connection lost')));
    this.client.on('end', () => this.markDown(new Error('connection closed')));
    this.client.on('ready', () => {
      this.connections++;
      this.markUp();
    });
  }

  /** How many times the connection has become ready: a new value means a fresh connection. */
  get readyCount(): number {
    return this.connections;
  }

  /** ioredis's connection state, for log lines. */
  get status(): string {
    return this.client.status;
  }

  /** Whether commands can be sent now. */
  get ready(): boolean {
    return this.client.status === 'ready';
  }

  /**
   * Waits until the first connection is up, at most `timeoutMs`, so that a gateway starting beside
   * a healthy Redis uses it from its first request. Resolves either way; an unreachable Redis is
   * then an outage like any other.
   */
  async waitReady(timeoutMs: number): Promise<boolean> {
    if (this.ready) return true;
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        resolve(ok);
      };
      const onReady = (): void => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.client.on('ready', onReady);
    });
  }

  /** Records a failure; logs only the first of an outage. */
  markDown(err: unknown): void {
    if (this.down) return;
    this.down = true;
    this.logger.warn({ redis: this.target, err: err instanceof Error ? err.message : String(err) }, `Redis is unavailable; ${this.effect} until it returns`);
  }

  /**
   * Records a success: ends an outage that was only a slow command (the connection never dropped,
   * so no reconnection would end it), so that the next real outage is logged again.
   */
  markUp(): void {
    if (!this.down) return;
    this.down = false;
    this.logger.info({ redis: this.target }, 'Redis is reachable again; shared state is back in use');
  }

  async close(): Promise<void> {
    this.client.removeAllListeners('close');
    this.client.removeAllListeners('end');
    this.client.removeAllListeners('error');
    this.client.on('error', () => undefined);
    await closeRedis(this.client);
  }
}

/** The URL without its password, for log lines. */
function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'redis';
  }
}
