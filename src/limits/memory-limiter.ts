/**
 * The embedded backend: every counter in this process's memory, for one gateway instance. A check
 * of all four quantities is a few map lookups and additions, with no promise. Counters of keys
 * that have been quiet for a whole window are swept once a minute.
 */
import type { LimitPlan, Quota } from './plan.js';
import { limitHeaders, rejection, snapshotOf } from './outcome.js';
import type { Admission, AdmissionRequest, Counts, LimitsView, RateLimiter, Settlement } from './types.js';
import { SlidingWindow } from './window.js';

const DAY_SECONDS = 86_400;
const NO_BUCKETS: never[] = [];

interface DayCount {
  day: number;
  count: number;
}

class MemoryAdmission implements Admission {
  private open = true;

  constructor(
    private readonly limiter: MemoryLimiter,
    readonly headers: Readonly<Record<string, string>>,
    private readonly request: AdmissionRequest,
    private readonly second: number,
    private readonly day: number,
  ) {}

  settle(settlement: Settlement): void {
    if (!this.open) return;
    this.open = false;
    this.limiter.release(this.request, this.second, this.day, settlement);
  }
}

export class MemoryLimiter implements RateLimiter {
  private readonly windows = new Map<string, SlidingWindow>();
  private readonly days = new Map<string, DayCount>();
  private readonly inFlight = new Map<string, number>();
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

    const requestWindow = rpm && this.window(keyId, 'rpm', rpm);
    const tokenWindow = tpm && this.window(keyId, 'tpm', tpm);
    tokenWindow?.advance(second);
    const dayCount = daily && this.dayCount(keyId, plan, daily, day);
    const flightKey = inFlight && `${keyId}\u0000inflight\u0000${inFlight.pool}`;
    const flying = flightKey === null ? 0 : (this.inFlight.get(flightKey) ?? 0);

    // Every request counts against requests per minute, refused ones too (spec 8, rule 2).
    requestWindow?.add(second, 1);
    const requests = requestWindow?.total ?? 0;
    const admitted =
      (rpm === null || requests <= rpm.limit) &&
      (tpm === null || (tokenWindow as SlidingWindow).total + tokens <= tpm.limit) &&
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
    if (flightKey !== null) this.inFlight.set(flightKey, flying + 1);
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
    return new MemoryAdmission(this, limitHeaders(plan, counts), request, second, day);
  }

  /** Called once per admission by MemoryAdmission.settle. */
  release(request: AdmissionRequest, second: number, day: number, settlement: Settlement): void {
    const { plan, keyId } = request;
    if (plan.tokensPerMinute !== null && settlement.tokens !== null) {
      this.windows.get(`${keyId}\u0000tpm\u0000${plan.tokensPerMinute.pool}`)?.adjust(second, settlement.tokens - request.tokens, Math.floor(this.clock() / 1000));
    }
    if (plan.daily !== null && settlement.failed) {
      const count = this.days.get(`${keyId}\u0000day\u0000${plan.modality}\u0000${plan.daily.pool}`);
      if (count !== undefined && count.day === day && count.count > 0) count.count -= 1;
    }
    if (plan.inFlight !== null) {
      const key = `${keyId}\u0000inflight\u0000${plan.inFlight.pool}`;
      const flying = (this.inFlight.get(key) ?? 1) - 1;
      if (flying > 0) this.inFlight.set(key, flying);
      else this.inFlight.delete(key);
    }
  }

  peek(keyId: string, plan: LimitPlan): LimitsView {
    const nowMs = this.clock();
    const second = Math.floor(nowMs / 1000);
    const requestWindow = plan.requestsPerMinute && this.windows.get(`${keyId}\u0000rpm\u0000${plan.requestsPerMinute.pool}`);
    const tokenWindow = plan.tokensPerMinute && this.windows.get(`${keyId}\u0000tpm\u0000${plan.tokensPerMinute.pool}`);
    requestWindow?.advance(second);
    tokenWindow?.advance(second);
    const day = plan.daily && this.days.get(`${keyId}\u0000day\u0000${plan.modality}\u0000${plan.daily.pool}`);
    const counts: Counts = {
      admitted: true,
      nowMs,
      requests: requestWindow?.total ?? 0,
      tokens: tokenWindow?.total ?? 0,
      day: day && day.day === Math.floor(second / DAY_SECONDS) ? day.count : 0,
      inFlight: plan.inFlight === null ? 0 : (this.inFlight.get(`${keyId}\u0000inflight\u0000${plan.inFlight.pool}`) ?? 0),
      requestBuckets: requestWindow?.buckets() ?? NO_BUCKETS,
      tokenBuckets: tokenWindow?.buckets() ?? NO_BUCKETS,
    };
    return { snapshot: snapshotOf(plan, counts), headers: limitHeaders(plan, counts) };
  }

  private window(keyId: string, quantity: 'rpm' | 'tpm', quota: Quota): SlidingWindow {
    const key = `${keyId}\u0000${quantity}\u0000${quota.pool}`;
    let window = this.windows.get(key);
    if (window === undefined) {
      window = new SlidingWindow();
      this.windows.set(key, window);
    }
    return window;
  }

  private dayCount(keyId: string, plan: LimitPlan, quota: Quota, day: number): DayCount {
    const key = `${keyId}\u0000day\u0000${plan.modality}\u0000${quota.pool}`;
    let count = this.days.get(key);
    if (count === undefined) {
      count = { day, count: 0 };
      this.days.set(key, count);
    } else if (count.day !== day) {
      count.day = day;
      count.count = 0;
    }
    return count;
  }

  private sweep(): void {
    const nowMs = this.clock();
    const second = Math.floor(nowMs / 1000);
    const day = Math.floor(second / DAY_SECONDS);
    for (const [key, window] of this.windows) if (window.idleAt(second)) this.windows.delete(key);
    for (const [key, count] of this.days) if (count.day !== day) this.days.delete(key);
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    return Promise.resolve();
  }
}
