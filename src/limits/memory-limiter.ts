/**
 * The embedded backend: every counter in this process's memory, for one gateway instance. A check
 * of all four quantities is a few map lookups and additions, with no promise. Counters of keys
 * that have been quiet for a whole window are swept once a minute.
 */
import type { LimitPlan } from './plan.js';
import { limitHeaders, rejection, snapshotOf } from './outcome.js';
import type { Admission, AdmissionRequest, Counts, LimitsView, RateLimiter, Settlement } from './types.js';
import { SlidingWindow } from './window.js';
import { usableTokenCount } from '../util/token-count.js';

const DAY_SECONDS = 86_400;
const NO_BUCKETS: never[] = [];

interface DayCount {
  day: number;
  count: number;
}

/**
 * One key's counters in one pool. Reached through two lookups by strings that are the same
 * objects on every request (the key id, the plan's pool), so that V8 reuses their hashes: a
 * counter name built per request cost a concatenation and a hash for each quantity.
 */
interface PoolCounters {
  requests: SlidingWindow | null;
  tokens: SlidingWindow | null;
  days: Map<string, DayCount>;
  inFlight: number;
}

class MemoryAdmission implements Admission {
  private open = true;

  constructor(
    readonly headers: Readonly<Record<string, string>>,
    /** Tokens reserved, and where: settled into the window at the second they were counted in. */
    private readonly tokens: number,
    private readonly tokenWindow: SlidingWindow | null,
    private readonly second: number,
    private readonly dayCount: DayCount | null,
    private readonly day: number,
    private readonly flight: PoolCounters | null,
    private readonly clock: () => number,
  ) {}

  settle(settlement: Settlement): void {
    if (!this.open) return;
    this.open = false;
    const used = usableTokenCount(settlement.tokens);
    if (this.tokenWindow !== null && used !== null) {
      this.tokenWindow.adjust(this.second, used - this.tokens, Math.floor(this.clock() / 1000));
    }
    const count = this.dayCount;
    if (count !== null && settlement.failed && count.day === this.day && count.count > 0) count.count -= 1;
    if (this.flight !== null && this.flight.inFlight > 0) this.flight.inFlight -= 1;
  }
}

export class MemoryLimiter implements RateLimiter {
  /** Key id → pool → counters. */
  private readonly keys = new Map<string, Map<string, PoolCounters>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly clock: () => number = Date.now) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  admit(request: AdmissionRequest): Admission {
    const nowMs = this.clock();
    const second = Math.floor(nowMs / 1000);
    const day = Math.floor(second / DAY_SECONDS);
    const { plan, keyId, tokens } = request;
    const { requestsPerMinute: rpm, tokensPerMinute: tpm, daily, inFlight } = plan;
    const pools = this.poolsOf(keyId);

    const requestWindow = rpm && requestsWindow(counters(pools, rpm.pool));
    const tokenWindow = tpm && tokensWindow(counters(pools, tpm.pool));
    tokenWindow?.advance(second);
    const dayCount = daily && dayCountOf(counters(pools, daily.pool), plan.modality, day);
    const flight = inFlight && counters(pools, inFlight.pool);
    const flying = flight === null ? 0 : flight.inFlight;

    // Every request counts against requests per minute, refused ones too (spec 8, rule 2).
    requestWindow?.add(second, 1);
    const requests = requestWindow?.total ?? 0;
    const admitted =
      (rpm === null || requests <= rpm.limit) &&
      // A request that reserves no tokens (a replay) is never refused for them.
      (tpm === null || tokens === 0 || (tokenWindow as SlidingWindow).total + tokens <= tpm.limit) &&
      (daily === null || (dayCount as DayCount).count + 1 <= daily.limit) &&
      (inFlight === null || flying + 1 <= inFlight.limit);

    if (!admitted) {
      const counts: Counts = {
        admitted,
        nowMs,
        requests,
        tokens: tokenWindow?.total ?? 0,
        day: dayCount?.count ?? 0,
        inFlight: flying,
        requestBuckets: requestWindow?.buckets() ?? NO_BUCKETS,
        tokenBuckets: tokenWindow?.buckets() ?? NO_BUCKETS,
      };
      throw rejection(plan, counts, tokens);
    }
    tokenWindow?.add(second, tokens);
    if (dayCount !== null) dayCount.count += 1;
    if (flight !== null) flight.inFlight = flying + 1;
    const counts: Counts = {
      admitted,
      nowMs,
      requests,
      tokens: tokenWindow?.total ?? 0,
      day: dayCount?.count ?? 0,
      inFlight: flying + 1,
      requestBuckets: NO_BUCKETS,
      tokenBuckets: NO_BUCKETS,
    };
    return new MemoryAdmission(limitHeaders(plan, counts), tokens, tokenWindow, second, dayCount, day, flight, this.clock);
  }

  peek(keyId: string, plan: LimitPlan): LimitsView {
    const nowMs = this.clock();
    const second = Math.floor(nowMs / 1000);
    const pools = this.keys.get(keyId);
    const find = (pool: string | undefined): PoolCounters | undefined => (pool === undefined ? undefined : pools?.get(pool));
    const requestWindow = find(plan.requestsPerMinute?.pool)?.requests ?? null;
    const tokenWindow = find(plan.tokensPerMinute?.pool)?.tokens ?? null;
    requestWindow?.advance(second);
    tokenWindow?.advance(second);
    const day = find(plan.daily?.pool)?.days.get(plan.modality);
    const counts: Counts = {
      admitted: true,
      nowMs,
      requests: requestWindow?.total ?? 0,
      tokens: tokenWindow?.total ?? 0,
      day: day !== undefined && day.day === Math.floor(second / DAY_SECONDS) ? day.count : 0,
      inFlight: find(plan.inFlight?.pool)?.inFlight ?? 0,
      requestBuckets: requestWindow?.buckets() ?? NO_BUCKETS,
      tokenBuckets: tokenWindow?.buckets() ?? NO_BUCKETS,
    };
    return { snapshot: snapshotOf(plan, counts), headers: limitHeaders(plan, counts) };
  }

  private poolsOf(keyId: string): Map<string, PoolCounters> {
    let pools = this.keys.get(keyId);
    if (pools === undefined) {
      pools = new Map();
      this.keys.set(keyId, pools);
    }
    return pools;
  }

  /** Forgets windows whose counts have all left, day counts of past days, and what is then empty. */
  private sweep(): void {
    const nowMs = this.clock();
    const second = Math.floor(nowMs / 1000);
    const day = Math.floor(second / DAY_SECONDS);
    for (const [keyId, pools] of this.keys) {
      for (const [pool, c] of pools) {
        if (c.requests?.idleAt(second) === true) c.requests = null;
        if (c.tokens?.idleAt(second) === true) c.tokens = null;
        for (const [modality, count] of c.days) if (count.day !== day) c.days.delete(modality);
        if (c.requests === null && c.tokens === null && c.days.size === 0 && c.inFlight === 0) pools.delete(pool);
      }
      if (pools.size === 0) this.keys.delete(keyId);
    }
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    return Promise.resolve();
  }
}

function counters(pools: Map<string, PoolCounters>, pool: string): PoolCounters {
  let c = pools.get(pool);
  if (c === undefined) {
    c = { requests: null, tokens: null, days: new Map(), inFlight: 0 };
    pools.set(pool, c);
  }
  return c;
}

function requestsWindow(c: PoolCounters): SlidingWindow {
  return (c.requests ??= new SlidingWindow());
}

function tokensWindow(c: PoolCounters): SlidingWindow {
  return (c.tokens ??= new SlidingWindow());
}

function dayCountOf(c: PoolCounters, modality: string, day: number): DayCount {
  let count = c.days.get(modality);
  if (count === undefined) {
    count = { day, count: 0 };
    c.days.set(modality, count);
  } else if (count.day !== day) {
    count.day = day;
    count.count = 0;
  }
  return count;
}
