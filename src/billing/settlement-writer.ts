/**
 * Commits finished requests (charges, released holds, usage records) to the store with group
 * commit: the first settlement schedules a commit for the end of the current event-loop turn, so
 * every request that finishes in the same turn shares it, and those that arrive while a commit
 * runs go together in the next one. Under load one transaction carries many requests; an idle
 * gateway waits no more than one turn. (SQLite commits synchronously, so without the deferral
 * nothing could ever join a batch.) A stream's end asks for its commit at once when the writer is
 * idle: it saves the stream a socket write of its own for [DONE], worth more than a batch of one.
 * Once a commit carried a busy turn's worth of requests, the next one waits a few turns more (see
 * GATHER_TURNS): under load batches grow, and a commit's cost is mostly per batch, not per request.
 *
 * A charged request's usage record comes inside its settlement and is committed with its charge.
 * The records of requests with nothing to commit (uncharged, failed) are not waited for: they are
 * queued apart and written once a second (or every USAGE_BATCH records), and on close, in small
 * chunks between charges, so that a response never waits behind a long write. Under sustained load
 * the charge queue is never empty between two commits, so those chunks never get their turn: once
 * USAGE_BATCH records wait, each charge commit also carries a few of them (twice as many as it has
 * charges), so that the backlog shrinks while the load lasts instead of growing with it.
 *
 * A commit that fails is retried, in order, until it succeeds or the gateway closes; callers wait
 * for their own settlement's commit (so a charge is durable before the response finishes) for at
 * most `waitMs`, after which the response goes out and the settlement stays queued. A batch that
 * keeps failing because the store refuses what it holds (a value the schema cannot keep, see
 * storage/refused-write.ts) is committed one settlement at a time and the refused one set aside
 * (settlement-spill.ts), so that one bad settlement does not hold up every charge behind it; a
 * store that cannot write now (down, full, read-only) sets nothing aside: the batch waits. What is
 * still queued when the close's grace has passed (the store down or hung), and what comes after
 * the close, is spilled to a file committed at the next start, not lost.
 */
import type { Logger } from 'pino';
import type { Settlement, Store, UsageRecord } from '../storage/types.js';
import type { SettlementSpill } from './settlement-spill.js';
import { isRefusedWrite } from '../storage/refused-write.js';

const MAX_BATCH = 500;
const RETRY_MS = 200;
const USAGE_BATCH = 1_000;
/**
 * Usage records go in transactions of at most this many, with the loop free between two, and
 * only when no charge is waiting: a write of 100 records held the loop long enough to show in the
 * p99 at 1,000 requests/s.
 */
const USAGE_CHUNK = 25;
/** Under pressure, a charge commit carries this many usage records per charge (at least USAGE_CHUNK). */
const USAGE_PER_CHARGE = 2;
const USAGE_EVERY_MS = 1_000;
/**
 * After a commit of at least BUSY_BATCH requests, the writer lets up to GATHER_TURNS more turns of
 * the event loop pass, while fewer than GATHER_TARGET requests wait, before the next commit. A
 * commit's cost is mostly its pages, one or two per table and index it touches whatever the number
 * of rows (SQLite, batches of 10: 37 µs a request; of 20: 29; of 40: 24), and at 32 connections
 * the requests of one turn made batches of about 10. The wait is counted in turns, not time: a
 * turn is long only when the loop has requests to run, and an idle loop turns in microseconds, so
 * a quiet gateway (where batches stay under BUSY_BATCH anyway) never waits for it. Interleaved
 * against committing every turn, at 32 connections: 8,155 against 6,265 requests/s and 129
 * against 163 µs of CPU a request (medians of six); at 1,000 requests/s, where batches are of one
 * or two requests, p99 2.71 against 3.09 ms (medians of seven).
 */
const BUSY_BATCH = 6;
const GATHER_TURNS = 8;
const GATHER_TARGET = 64;
/** Refusals of one batch in a row after which it is taken apart (a refusal may be a passing race). */
const ISOLATE_AFTER = 3;
/** How long the close tries to commit what is queued before spilling it. */
export const CLOSE_GRACE_MS = 5_000;

/** What the writer tells the metrics. */
export interface SettlementObserver {
  /** `count` settlements (charges, usage records) were committed in one write that took `ms`. */
  committed(count: number, ms: number): void;
  /** A write failed; it is retried. */
  failed(): void;
}

interface Pending {
  settlement: Settlement;
  /** Ends the caller's wait: when committed, or after `waitMs`, whichever comes first. */
  resolve: () => void;
  /** Told when really committed. */
  durable: () => void;
  queuedAt: number;
  released: boolean;
}

const nothing = (): void => undefined;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class SettlementWriter {
  private queue: Pending[] = [];
  private running: Promise<void> | null = null;
  private closed = false;
  /** Past the close's grace: the drain stops after its current write. */
  private abandoned = false;
  private usage: UsageRecord[] = [];
  /** Set once a second (or when many records wait): the drain then writes the usage records. */
  private usageDue = false;
  private readonly usageTimer: NodeJS.Timeout;
  /**
   * One timer for every waiting caller's `waitMs`, not one per commit: a timer set and cleared
   * per request cost more than the rest of queueing it. It stays armed while anything waits.
   */
  private patience: NodeJS.Timeout | null = null;
  /** Told of every write (the metrics), when set. */
  observer: SettlementObserver | null = null;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly spill: SettlementSpill | null = null,
    private readonly waitMs = 5_000,
  ) {
    this.usageTimer = setInterval(() => this.writeUsage(), USAGE_EVERY_MS);
    this.usageTimer.unref();
  }

  /** Queues a usage record, written with others off the request's path. */
  record(usage: UsageRecord): void {
    if (this.abandoned) {
      void this.lateSettlements([usageOnly(usage)]);
      return;
    }
    this.usage.push(usage);
    if (this.usage.length >= USAGE_BATCH) this.writeUsage();
  }

  private writeUsage(): void {
    if (this.usage.length === 0) return;
    this.usageDue = true;
    this.running ??= this.drain();
  }

  /**
   * Queues a settlement; resolves once it is committed, or after `waitMs` at most. `now`: when
   * the writer is idle, commit at once instead of at the end of the turn (a stream's end, whose
   * last frames can then leave in the same socket write as [DONE]). `durable` is called when the
   * settlement is really committed, however long that takes.
   */
  commit(settlement: Settlement, now = false, durable: () => void = nothing): Promise<void> {
    if (this.abandoned) return this.lateSettlements([settlement]);
    return new Promise((resolve) => {
      this.queue.push({ settlement, resolve, durable, queuedAt: performance.now(), released: false });
      this.patience ??= this.armPatience(this.waitMs);
      if (this.running === null) this.running = now ? this.drain() : nextTurn().then(() => this.drain());
    });
  }

  private armPatience(ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => this.releaseWaiters(), ms);
    timer.unref();
    return timer;
  }

  /** Lets callers that waited `waitMs` go on; their settlements stay queued until committed. */
  private releaseWaiters(): void {
    const now = performance.now();
    let next = Infinity;
    for (const pending of this.queue) {
      if (pending.released) continue;
      const due = pending.queuedAt + this.waitMs;
      if (due <= now) {
        pending.released = true;
        pending.resolve();
      } else {
        next = Math.min(next, due);
      }
    }
    this.patience = next === Infinity ? null : this.armPatience(next - now);
  }

  /** The next write: waiting charges first, else a chunk of usage records when they are due. */
  private nextBatch(): { settlements: Settlement[]; charges: number; finish: () => void } | null {
    if (this.queue.length > 0) {
      const batch = this.queue.slice(0, MAX_BATCH);
      const riders = this.usage.length >= USAGE_BATCH ? this.usage.slice(0, Math.max(USAGE_CHUNK, batch.length * USAGE_PER_CHARGE)) : [];
      const settlements = batch.map((p) => p.settlement);
      for (const usage of riders) settlements.push(usageOnly(usage));
      return {
        settlements,
        charges: batch.length,
        finish: () => {
          this.queue.splice(0, batch.length);
          this.usage.splice(0, riders.length);
          for (const pending of batch) {
            if (!pending.released) pending.resolve();
            pending.durable();
          }
        },
      };
    }
    if (!this.usageDue || this.usage.length === 0) return null;
    const records = this.usage.slice(0, USAGE_CHUNK);
    return {
      settlements: records.map(usageOnly),
      charges: 0,
      finish: () => {
        this.usage.splice(0, records.length);
        if (this.usage.length === 0) this.usageDue = false;
      },
    };
  }

  private async drain(): Promise<void> {
    let failures = 0;
    for (let batch = this.nextBatch(); batch !== null && !this.abandoned; batch = this.nextBatch()) {
      try {
        const started = performance.now();
        await this.store.commitSettlements(batch.settlements);
        const ms = performance.now() - started;
        batch.finish();
        failures = 0;
        this.tell((observer) => observer.committed(batch.settlements.length, ms));
        // Let requests run between two writes (a commit on SQLite is synchronous).
        await nextTurn();
        if (batch.charges >= BUSY_BATCH && !this.closed) await this.gather();
      } catch (err) {
        failures++;
        this.tell((observer) => observer.failed());
        if (failures === 1) this.logger.error({ err, queued: this.queue.length + this.usage.length }, 'could not commit settlements; retrying');
        if (this.abandoned) break;
        if (failures >= ISOLATE_AFTER && this.spill !== null && isRefusedWrite(err) && (await this.commitApart(batch))) {
          failures = 0;
          continue;
        }
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
    this.running = null;
  }

  /**
   * The batch's settlements one at a time: those the store refuses for what they hold are set
   * aside (written to a file, logged) and count as done, so that what follows them is committed.
   * Whether the batch is done: not when the store fails otherwise (it cannot write now), nor when
   * the refused ones could not be written out; the batch is then retried whole (what it committed
   * meanwhile is committed once: commits are idempotent).
   */
  private async commitApart(batch: { settlements: Settlement[]; finish: () => void }): Promise<boolean> {
    const refused: Settlement[] = [];
    for (const settlement of batch.settlements) {
      try {
        await this.store.commitSettlements([settlement]);
      } catch (err) {
        if (!isRefusedWrite(err)) return false;
        this.logger.error({ err, request_id: settlement.requestId }, 'the store refuses this settlement; it is set aside');
        refused.push(settlement);
      }
    }
    if (refused.length > 0 && !this.setAside('rejected', refused)) return false;
    batch.finish();
    return true;
  }

  /** A settlement that comes after the close (a handler the drain stopped waiting for): written out for the next start. */
  private lateSettlements(settlements: Settlement[]): Promise<void> {
    // setAside logs them in full when even the file fails.
    if (this.spill !== null) this.setAside('unsettled', settlements);
    else this.logger.fatal({ settlements }, 'a settlement came after shutdown; it is in this log line only');
    return Promise.resolve();
  }

  /** Writes settlements to the spill; a spill that fails is logged with the settlements themselves, the last place they are. */
  private setAside(kind: 'rejected' | 'unsettled', settlements: Settlement[]): boolean {
    try {
      const file = (this.spill as SettlementSpill).write(kind, settlements);
      this.logger.error({ file, settlements: settlements.length }, kind === 'rejected' ? 'settlements the store refuses were set aside' : 'settlements not committed before shutdown were written for the next start');
      return true;
    } catch (err) {
      this.logger.fatal({ err, settlements }, 'settlements could not be written anywhere; they are in this log line only');
      return false;
    }
  }

  /** The metrics are told; a fault of theirs is logged, never taken for a failed commit. */
  private tell(report: (observer: SettlementObserver) => void): void {
    if (this.observer === null) return;
    try {
      report(this.observer);
    } catch (err) {
      this.logger.warn({ err }, 'settlement metrics could not be updated');
    }
  }

  /** Lets the next batch grow while the loop is busy (see GATHER_TURNS). */
  private async gather(): Promise<void> {
    for (let turn = 0; turn < GATHER_TURNS && this.queue.length < GATHER_TARGET; turn++) await nextTurn();
  }

  /** Settlements and usage records not yet committed. */
  get backlog(): number {
    return this.queue.length + this.usage.length;
  }

  /**
   * Commits what is queued (graceful shutdown), for at most `graceMs`: what is left then (the
   * store down, or a commit hung) is spilled for the next start. Rejects only when it could be
   * kept nowhere (no spill, or the spill failed), after logging it.
   */
  async close(graceMs = CLOSE_GRACE_MS): Promise<void> {
    this.closed = true;
    clearInterval(this.usageTimer);
    if (this.patience !== null) clearTimeout(this.patience);
    this.patience = null;
    this.usageDue = true;
    const deadline = performance.now() + graceMs;
    this.running ??= this.drain();
    while (this.running !== null && this.backlog > 0) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      let timer: NodeJS.Timeout | undefined;
      const drained = this.running;
      await Promise.race([drained, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
      // The drain ended with work left (it came after the drain's last batch): another one.
      if (this.running === null && this.backlog > 0) this.running = this.drain();
    }
    this.abandoned = true;
    const waiting = this.queue;
    const left = [...waiting.map((pending) => pending.settlement), ...this.usage.map(usageOnly)];
    this.queue = [];
    this.usage = [];
    const kept = left.length === 0 || (this.spill !== null && this.setAside('unsettled', left));
    if (!kept && this.spill === null) this.logger.fatal({ settlements: left }, 'settlements could not be committed before shutdown; they are in this log line only');
    // Nobody waits on a writer that is gone.
    for (const pending of waiting) {
      if (pending.released) continue;
      pending.released = true;
      pending.resolve();
    }
    if (!kept) throw new Error(`${left.length} settlements could not be committed or written before shutdown`);
  }
}

function usageOnly(usage: UsageRecord): Settlement {
  return { requestId: usage.requestId, charge: null, releaseReservation: false, usage };
}
