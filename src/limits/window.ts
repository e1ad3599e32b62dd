/**
 * The sliding window both backends count minutes in: one bucket per second, and a request counted
 * in second s stays in the window until second s + 60 begins, 59 to 60 seconds after it came: no
 * 59-second span can hold more than the limit, a minute can hold at most what the first second
 * of it adds (the window errs by up to a second on the lenient side), and the wait until there is
 * room again is exact: it is when enough of the oldest buckets have left. Never longer than 60 s,
 * which is what lets LangChain retry a refused request at all (it honours no Retry-After over 60).
 */
import type { Bucket } from './types.js';

/** Seconds a bucket stays counted: the current second and the 59 before it. */
export const WINDOW_BUCKETS = 60;

/**
 * Milliseconds from `nowMs` until the window holds at most `limit - need` (0 when it already does,
 * Infinity when it never will), given its buckets oldest first.
 */
export function msUntilRoom(buckets: readonly Bucket[], total: number, limit: number, need: number, nowMs: number): number {
  if (total + need <= limit) return 0;
  let left = total;
  for (const bucket of buckets) {
    left -= bucket.amount;
    if (left + need <= limit) return Math.max(0, (bucket.second + WINDOW_BUCKETS) * 1000 - nowMs);
  }
  return Infinity;
}

/** One key's window in memory: a ring of per-second amounts and their running total. */
export class SlidingWindow {
  private readonly amounts = new Float64Array(WINDOW_BUCKETS);
  private newest = -Infinity;
  total = 0;

  /** Drops the buckets that left the window by second `second`. */
  advance(second: number): void {
    const gap = second - this.newest;
    if (gap <= 0) return;
    if (gap >= WINDOW_BUCKETS) {
      this.amounts.fill(0);
      this.total = 0;
    } else {
      for (let s = this.newest + 1; s <= second; s++) {
        const slot = s % WINDOW_BUCKETS;
        this.total -= this.amounts[slot] as number;
        this.amounts[slot] = 0;
      }
    }
    this.newest = second;
  }

  add(second: number, amount: number): void {
    this.advance(second);
    const slot = second % WINDOW_BUCKETS;
    this.amounts[slot] = (this.amounts[slot] as number) + amount;
    this.total += amount;
  }

  /** Corrects what was counted in `second`, if that second is still in the window. */
  adjust(second: number, delta: number, now: number): void {
    this.advance(now);
    if (second <= this.newest - WINDOW_BUCKETS || second > this.newest) return;
    const slot = second % WINDOW_BUCKETS;
    const corrected = Math.max(0, (this.amounts[slot] as number) + delta);
    this.total += corrected - (this.amounts[slot] as number);
    this.amounts[slot] = corrected;
  }

  /** Whether everything counted has left the window by `second`: the key can be forgotten. */
  idleAt(second: number): boolean {
    return second - this.newest >= WINDOW_BUCKETS;
  }

  /** Non-empty buckets, oldest first; only on the path that explains a rejection. */
  buckets(): Bucket[] {
    const out: Bucket[] = [];
    for (let s = this.newest - WINDOW_BUCKETS + 1; s <= this.newest; s++) {
      const amount = this.amounts[s % WINDOW_BUCKETS] as number;
      if (amount > 0) out.push({ second: s, amount });
    }
    return out;
  }
}
