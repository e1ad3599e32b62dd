/**
 * Garbage collections as a server under test saw them, for `npm run bench -- --tail`: each one's
 * wall-clock start (milliseconds since the epoch, the clock the load driver stamps requests with)
 * and its length, appended to a file as JSON lines. Node reports them as `gc` performance entries,
 * so the server's own code is unchanged: the bench loads this into it with `--import`
 * (gc-recorder-preload.ts).
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';

/** One collection: when it started, how long the thread it ran on was held, and Node's kind for it. */
export interface Collection {
  start: number;
  ms: number;
  /** `perf_hooks.constants.NODE_PERFORMANCE_GC_*`: 1 a young-generation scavenge, 4 a full mark-compact, 8 incremental marking, 16 weak callbacks. */
  kind: number;
}

/** Node's kind of a young-generation scavenge. */
export const SCAVENGE = constants.NODE_PERFORMANCE_GC_MINOR;

const FLUSH_EVERY_MS = 500;

/**
 * Appends every collection from now on to `file`, at most every half second (a write a collection
 * would be a system call in the measured server's hot path) and when the process exits.
 * Returns a function that stops the recording and writes what is pending.
 */
export function recordCollections(file: string): () => void {
  let pending = '';
  const flush = (): void => {
    if (pending === '') return;
    appendFileSync(file, pending);
    pending = '';
  };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as { detail?: { kind?: number } | null }).detail?.kind ?? 0;
      pending += `${JSON.stringify([performance.timeOrigin + entry.startTime, entry.duration, kind])}\n`;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const timer = setInterval(flush, FLUSH_EVERY_MS);
  timer.unref();
  process.on('exit', flush);
  return () => {
    observer.disconnect();
    clearInterval(timer);
    process.off('exit', flush);
    flush();
  };
}

/** The collections a recorder wrote to `file`; none when it wrote nothing. */
export function readCollections(file: string): Collection[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [start, ms, kind] = JSON.parse(line) as [number, number, number];
      return { start, ms, kind };
    });
}

/** Where the preload of the process `pid` writes, in the directory the bench gives it. */
export function collectionsFile(dir: string, pid: number): string {
  return join(dir, `gc-${pid}.jsonl`);
}

/** The environment variable that names that directory. */
export const COLLECTIONS_DIR_VARIABLE = 'TOLLGATE_BENCH_GC_DIR';
