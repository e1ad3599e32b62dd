/**
 * The shared backend: all four quantities checked and consumed in one round trip to Redis (one
 * Lua script, sent by SHA), so several gateway instances share every limit exactly. The scripts
 * are in scripts.ts; what their counts mean for the caller is decided in ../outcome.ts, as for
 * the memory backend.
 */
import type { RedisConnection } from '../../storage/redis/redis-connection.js';
import type { LimitPlan } from '../plan.js';
import { limitHeaders, rejection, snapshotOf } from '../outcome.js';
import type { Admission, AdmissionRequest, Bucket, Counts, LimitsView, RateLimiter, Settlement } from '../types.js';
import { ADMIT_SCRIPT, PEEK_SCRIPT, SETTLE_SCRIPT } from './scripts.js';
import { usableTokenCount } from '../../util/token-count.js';

type Reply = [number, number, number, number, number, number, number[], number[]];

interface LimitCommands {
  tollgateAdmit(k1: string, k2: string, k3: string, k4: string, ...args: Array<string | number>): Promise<Reply>;
  tollgatePeek(k1: string, k2: string, k3: string, k4: string, ...args: Array<string | number>): Promise<Reply>;
  tollgateSettle(k1: string, k2: string, k3: string, ...args: Array<string | number>): Promise<number>;
}

/** Settlements that could not be sent wait for the connection to come back, up to this many. */
const MAX_PENDING_SETTLEMENTS = 100_000;

export interface RedisLimiterOptions {
  /** Prepended to every key, so that several deployments can share one Redis. */
  readonly keyPrefix: string;
  /** How long an in-flight slot lives if its instance dies before releasing it. */
  readonly inFlightTtlMs: number;
}

function buckets(flat: readonly number[]): Bucket[] {
  const out: Bucket[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push({ second: flat[i] as number, amount: flat[i + 1] as number });
  return out.sort((a, b) => a.second - b.second);
}

function countsOf(reply: Reply): Counts {
  return {
    admitted: reply[0] === 1,
    nowMs: reply[1],
    requests: reply[2],
    tokens: reply[3],
    day: reply[4],
    inFlight: reply[5],
    requestBuckets: buckets(reply[6]),
    tokenBuckets: buckets(reply[7]),
  };
}

/** The four keys of a plan for one API key, sharing the key id as hash tag. */
function keysOf(prefix: string, keyId: string, plan: LimitPlan): [string, string, string, string] {
  const base = `${prefix}rl:{${keyId}}:`;
  return [
    `${base}rpm:${plan.requestsPerMinute?.pool ?? '*'}`,
    `${base}tpm:${plan.tokensPerMinute?.pool ?? '*'}`,
    `${base}day:${plan.modality}:${plan.daily?.pool ?? '*'}`,
    `${base}inflight:${plan.inFlight?.pool ?? '*'}`,
  ];
}

function limitArgs(plan: LimitPlan): [number, number, number, number] {
  return [plan.requestsPerMinute?.limit ?? 0, plan.tokensPerMinute?.limit ?? 0, plan.daily?.limit ?? 0, plan.inFlight?.limit ?? 0];
}

class RedisAdmission implements Admission {
  private open = true;

  constructor(
    private readonly limiter: RedisLimiter,
    readonly headers: Readonly<Record<string, string>>,
    private readonly request: AdmissionRequest,
    private readonly keys: readonly [string, string, string, string],
  ) {}

  settle(settlement: Settlement): void {
    if (!this.open) return;
    this.open = false;
    const { plan, tokens } = this.request;
    const used = usableTokenCount(settlement.tokens);
    const delta = plan.tokensPerMinute !== null && used !== null ? used - tokens : 0;
    this.limiter.settle(this.keys, this.request.requestId, delta, plan.daily !== null && settlement.failed);
  }
}

export class RedisLimiter implements RateLimiter {
  private readonly commands: LimitCommands;
  /** Settlements that failed to reach Redis, sent again when the connection is back. */
  private pending: Array<() => void> = [];

  constructor(
    private readonly connection: RedisConnection,
    private readonly options: RedisLimiterOptions,
  ) {
    const redis = connection.client;
    redis.defineCommand('tollgateAdmit', { numberOfKeys: 4, lua: ADMIT_SCRIPT });
    redis.defineCommand('tollgatePeek', { numberOfKeys: 4, lua: PEEK_SCRIPT });
    redis.defineCommand('tollgateSettle', { numberOfKeys: 3, lua: SETTLE_SCRIPT });
    this.commands = redis as unknown as LimitCommands;
    redis.on('ready', () => this.resendPending());
  }

  async admit(request: AdmissionRequest): Promise<Admission> {
    const { plan } = request;
    const keys = keysOf(this.options.keyPrefix, request.keyId, plan);
    let reply: Reply;
    try {
      reply = await this.commands.tollgateAdmit(...keys, ...limitArgs(plan), request.tokens, request.requestId, this.options.inFlightTtlMs);
    } catch (err) {
      // No answer, but the script may have run (or run later, if Redis was only slow): the
      // request is counted elsewhere now, so undo it here if it did. Only what the plan counted:
      // a replay's plan takes no daily count, and its day key is the tier's real pool.
      this.settle(keys, request.requestId, plan.tokensPerMinute !== null ? -request.tokens : 0, plan.daily !== null);
      throw err;
    }
    if (this.pending.length > 0) this.resendPending();
    const counts = countsOf(reply);
    if (!counts.admitted) throw rejection(plan, counts, request.tokens);
    return new RedisAdmission(this, limitHeaders(plan, counts), request, keys);
  }

  /** Sends a settlement; one that fails is kept and sent again once the connection is back. */
  settle(keys: readonly [string, string, string, string], requestId: string, delta: number, giveBackDay: boolean): void {
    const send = (): void => {
      this.commands.tollgateSettle(keys[1], keys[2], keys[3], requestId, delta, giveBackDay ? '1' : '0', this.options.inFlightTtlMs).catch((err: unknown) => {
        this.connection.markDown(err);
        // Past the bound the entry is left to expire on its own (the in-flight TTL).
        if (this.pending.length < MAX_PENDING_SETTLEMENTS) this.pending.push(send);
      });
    };
    send();
  }

  /** Also called after any answer from Redis: a command can fail on a connection that stays up. */
  private resendPending(): void {
    const pending = this.pending;
    this.pending = [];
    for (const send of pending) send();
  }

  async peek(keyId: string, plan: LimitPlan): Promise<LimitsView> {
    const reply = await this.commands.tollgatePeek(...keysOf(this.options.keyPrefix, keyId, plan), ...limitArgs(plan));
    const counts = countsOf(reply);
    return { snapshot: snapshotOf(plan, counts), headers: limitHeaders(plan, counts) };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
