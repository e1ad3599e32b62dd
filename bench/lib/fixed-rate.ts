/**
 * A fixed-rate load driver with microsecond latencies. autocannon records whole milliseconds,
 * too coarse to compare p99s that differ by a fraction of one; this sends requests on a fixed
 * schedule over a keep-alive pool and times each one with hrtime.
 *
 * The schedule starts with `warmupSeconds` whose requests are not counted: a run's first
 * ~60 ms (a new pool opening its connections, the driver's own code not yet compiled) took
 * 10–40 ms per request for every target, the lower bound included, which made up half of the
 * slowest 1% of a 10-second run and so decided the p99. `onMeasuring` is called when the
 * counted part begins, for the caller's own snapshots (CPU time, steal).
 */
import { Pool } from 'undici';
import type { LoadResult, LoadSpec } from './load.js';
import { percentile } from './stats.js';

export interface FixedRateSpec extends LoadSpec {
  rate: number;
  warmupSeconds?: number;
  onMeasuring?: () => void;
  /** Told of every counted request: when it was sent (milliseconds since the epoch) and how long it took. */
  onSample?: (sentAt: number, ms: number) => void;
}

export async function runFixedRate(spec: FixedRateSpec): Promise<LoadResult> {
  const url = new URL(spec.url);
  const pool = new Pool(url.origin, { connections: spec.connections, keepAliveTimeout: 60_000 });
  const headers = { 'content-type': 'application/json', ...spec.headers };
  const latencies: number[] = [];
  let errors = 0;
  let non2xx = 0;
  const statuses: Record<string, number> = {};
  const pending = new Set<Promise<void>>();
  const send = (counted: boolean): void => {
    const start = process.hrtime.bigint();
    const sentAt = performance.timeOrigin + performance.now();
    const done = pool
      .request({ method: 'POST', path: url.pathname, headers, body: spec.body })
      .then(async (res) => {
        await res.body.arrayBuffer();
        if (counted) {
          const ms = Number(process.hrtime.bigint() - start) / 1e6;
          latencies.push(ms);
          spec.onSample?.(sentAt, ms);
        }
        if (res.statusCode < 200 || res.statusCode >= 300) {
          non2xx++;
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        }
      })
      .catch(() => {
        errors++;
      })
      .finally(() => pending.delete(done));
    pending.add(done);
  };
  const warmup = Math.round(spec.rate * (spec.warmupSeconds ?? 2));
  const total = warmup + Math.round(spec.rate * spec.durationSeconds);
  const began = performance.now();
  let measuredFrom = began;
  let sent = 0;
  // Catch up to the schedule on every tick, so timer jitter does not lower the rate.
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - began) / 1000) * spec.rate));
      while (sent < due) {
        if (sent === warmup) {
          measuredFrom = performance.now();
          spec.onMeasuring?.();
        }
        send(sent >= warmup);
        sent++;
      }
      if (sent >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 1);
  });
  await Promise.all(pending);
  const seconds = (performance.now() - measuredFrom) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, rps: latencies.length / seconds, p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99), errors, non2xx, statuses };
}
