/**
 * Claims shared by every instance through Redis: one key per Idempotency-Key, set only if absent
 * (a Lua script that also returns the holder, so a refused claim costs one round trip). A claim
 * lives CLAIM_TTL_MS and is extended while its request runs, so that the claims of an instance
 * that dies free themselves within that time instead of blocking resends for a whole budget.
 * While Redis is unreachable a claim cannot be taken safely: requests with a key are refused
 * with 503 (requests without one are unaffected).
 */
import type { Logger } from 'pino';
import { GatewayError } from '../errors/index.js';
import type { RedisConnection } from '../storage/redis/redis-connection.js';
import type { Claim, ClaimResult, IdempotencyClaims } from './claims.js';

export const CLAIM_TTL_MS = 30_000;
const REFRESH_EVERY_MS = CLAIM_TTL_MS / 3;

const CLAIM_SCRIPT = `
local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`;

const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

const REFRESH_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

interface ClaimCommands {
  tollgateClaim(key: string, value: string, ttlMs: number): Promise<string | null>;
  tollgateRelease(key: string, value: string): Promise<number>;
  tollgateRefresh(key: string, value: string, ttlMs: number): Promise<number>;
}

/** The stored value: request id, then fingerprint (request ids hold no space). */
function encode(claim: Claim): string {
  return `${claim.requestId} ${claim.fingerprint}`;
}

function decode(value: string): Claim {
  const space = value.indexOf(' ');
  return { requestId: value.slice(0, space), fingerprint: value.slice(space + 1) };
}

export class RedisClaims implements IdempotencyClaims {
  private readonly commands: ClaimCommands;
  /** Claims this instance holds: Redis key → value, extended together on one timer. */
  private readonly held = new Map<string, string>();
  /**
   * Releases on their way to Redis. A request cut by a drain gives its claim back just before the
   * gateway closes this connection: close waits for them, or the claim would outlive the instance
   * and turn the caller's resend away with 409 for CLAIM_TTL_MS.
   */
  private readonly releasing = new Set<Promise<void>>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keyPrefix: string,
    private readonly logger: Logger,
  ) {
    const redis = connection.client;
    redis.defineCommand('tollgateClaim', { numberOfKeys: 1, lua: CLAIM_SCRIPT });
    redis.defineCommand('tollgateRelease', { numberOfKeys: 1, lua: RELEASE_SCRIPT });
    redis.defineCommand('tollgateRefresh', { numberOfKeys: 1, lua: REFRESH_SCRIPT });
    this.commands = redis as unknown as ClaimCommands;
    this.timer = setInterval(() => this.refresh(), REFRESH_EVERY_MS);
    this.timer.unref();
  }

  private keyOf(id: string): string {
    // The hash tag keeps each claim in one Redis Cluster slot of its own.
    return `${this.keyPrefix}idem:{${id}}`;
  }

  async claim(id: string, claim: Claim): Promise<ClaimResult> {
    if (!this.connection.ready) throw unavailable();
    const key = this.keyOf(id);
    const value = encode(claim);
    let holder: string | null;
    try {
      holder = await this.commands.tollgateClaim(key, value, CLAIM_TTL_MS);
    } catch (err) {
      this.connection.markDown(err);
      // The script may still have run: give the claim back so that a resend is not kept waiting.
      this.commands.tollgateRelease(key, value).catch(() => undefined);
      throw unavailable(err);
    }
    this.connection.markUp();
    if (holder !== null) return { claimed: false, holder: decode(holder) };
    this.held.set(key, value);
    return { claimed: true };
  }

  async release(id: string, requestId: string): Promise<void> {
    const key = this.keyOf(id);
    const value = this.held.get(key);
    if (value === undefined || !value.startsWith(`${requestId} `)) return;
    this.held.delete(key);
    const releasing = this.giveBack(key, value);
    this.releasing.add(releasing);
    try {
      await releasing;
    } finally {
      this.releasing.delete(releasing);
    }
  }

  private async giveBack(key: string, value: string): Promise<void> {
    try {
      await this.commands.tollgateRelease(key, value);
    } catch (err) {
      // Left to expire: resends get 409 in flight until then (at most CLAIM_TTL_MS).
      this.connection.markDown(err);
      this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not release an idempotency claim; it expires on its own');
    }
  }

  private refresh(): void {
    for (const [key, value] of this.held) {
      this.commands.tollgateRefresh(key, value, CLAIM_TTL_MS).then(
        (extended) => {
          // Expired during an outage longer than the claim's life: another instance may run a resend too.
          if (extended === 0 && this.held.get(key) === value) this.logger.warn({ request_id: value.split(' ', 1)[0] }, 'an idempotency claim expired while its request ran; a resend may run twice');
        },
        (err: unknown) => this.connection.markDown(err),
      );
    }
  }

  /** Stops extending claims and waits for the releases already sent; the connection is its owner's to close. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.held.clear();
    await Promise.all(this.releasing);
  }
}

function unavailable(cause?: unknown): GatewayError {
  return new GatewayError('idempotency_unavailable', undefined, { cause, retryAfterSeconds: 1 });
}
