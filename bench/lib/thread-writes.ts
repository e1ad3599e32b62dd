/**
 * When the threads of a process other than its main thread write to files, sampled from
 * `/proc/PID/task/TID/io` every few milliseconds: in Tollgate on SQLite those are the checkpoint
 * workers (the copier's passes, the log's restarts), which `npm run bench -- --tail` sets against
 * the slowest requests. Linux only; elsewhere nothing is seen.
 */
import { readFileSync, readdirSync } from 'node:fs';

/** A stretch of time, in milliseconds since the epoch, in which some other thread wrote. */
export interface Span {
  start: number;
  end: number;
}

/**
 * Fewer bytes than this between two samples are not file writes: a worker's wake-up of another
 * thread (an eventfd) counts 8 bytes, a SQLite page 2 KiB or more.
 */
const MIN_BYTES = 1_024;
/** Samples this close together belong to one stretch of writing. */
const JOIN_MS = 50;

export class ThreadWrites {
  private readonly written = new Map<string, number>();
  private readonly spans: Span[] = [];
  private timer: NodeJS.Timeout | null = null;
  private threads: string[] = [];
  private listedAt = 0;

  constructor(
    private readonly pid: number,
    private readonly everyMs = 3,
  ) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.everyMs);
  }

  /** Stops sampling; the stretches in which another thread wrote, in order. */
  stop(): Span[] {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    return this.spans;
  }

  private sample(): void {
    const now = performance.timeOrigin + performance.now();
    // Threads come and go (V8's, libuv's, workers): listed again once a second.
    if (now - this.listedAt > 1_000) {
      this.threads = listThreads(this.pid);
      this.listedAt = now;
    }
    for (const tid of this.threads) {
      const bytes = writtenBytes(this.pid, tid);
      if (bytes === undefined) continue;
      const before = this.written.get(tid);
      this.written.set(tid, bytes);
      if (before === undefined || bytes - before < MIN_BYTES) continue;
      const last = this.spans.at(-1);
      if (last !== undefined && now - last.end <= JOIN_MS) last.end = now;
      else this.spans.push({ start: now, end: now });
    }
  }
}

/** The process's threads but its main one (whose id is the process's). */
function listThreads(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/task`).filter((tid) => tid !== String(pid));
  } catch {
    return [];
  }
}

/** Bytes the thread has passed to write system calls (`wchar`), or undefined once it is gone. */
function writtenBytes(pid: number, tid: string): number | undefined {
  try {
    const match = /^wchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${tid}/io`, 'utf8'));
    return match === null ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}
