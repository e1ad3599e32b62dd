/**
 * What the slowest 1% of a fixed-rate run met (`npm run bench -- --tail`): for each of those
 * requests, whether a garbage collection held the server while it was in flight (or ended just
 * before it was sent: the backlog a pause leaves takes a moment to drain), else whether another thread
 * of the server was writing around the time it was sent (Tollgate's checkpoint workers), else
 * neither. The share of all requests that fell in the same windows says how much likelier a slow
 * request was to meet one than any request.
 */
import { SCAVENGE, type Collection } from './gc-recorder.js';
import type { Span } from './thread-writes.js';
import { percentile } from './stats.js';

/** A counted request of the run: when it was sent (milliseconds since the epoch) and how long it took. */
export interface TimedRequest {
  sentAt: number;
  ms: number;
}

export interface TailSources {
  requests: number;
  /** The p99 latency, as the bench reports it (the latency of the request at the 99th percentile's rank). */
  p99: number;
  /** How many requests are the slowest 1% (rounded up; at least one). */
  slowest: number;
  /** Of the slowest: in flight during a collection, or sent within `afterCollectionMs` of its end. */
  collection: number;
  /** Of the slowest, the rest: sent within `nearWritesMs` of another thread's writes. */
  writes: number;
  /** Of the slowest: neither. */
  neither: number;
  /** The same two tests over all requests, as shares (0–1). */
  allCollection: number;
  allWrites: number;
  /** Collections that began while requests were counted, how many were young-generation scavenges, and their mean length. */
  collections: number;
  scavenges: number;
  meanCollectionMs: number;
}

/** A request sent this soon after a collection ended still met it: the backlog a pause leaves takes a moment to drain. */
export const AFTER_COLLECTION_MS = 3;
/** A request sent this close to another thread's writes is counted as near them. */
export const NEAR_WRITES_MS = 20;

export interface TailOptions {
  afterCollectionMs?: number;
  nearWritesMs?: number;
}

export function tailSources(requests: readonly TimedRequest[], collections: readonly Collection[], writes: readonly Span[], options: TailOptions = {}): TailSources {
  const { afterCollectionMs = AFTER_COLLECTION_MS, nearWritesMs = NEAR_WRITES_MS } = options;
  const byLatency = [...requests].sort((a, b) => a.ms - b.ms);
  const p99 = percentile(byLatency.map((r) => r.ms), 99);
  const slowest = byLatency.slice(byLatency.length - Math.max(1, Math.ceil(byLatency.length / 100)));
  const metCollection = (r: TimedRequest): boolean => collections.some((c) => r.sentAt <= c.start + c.ms + afterCollectionMs && r.sentAt + r.ms >= c.start);
  const nearWrites = (r: TimedRequest): boolean => writes.some((w) => r.sentAt >= w.start - nearWritesMs && r.sentAt <= w.end + nearWritesMs);
  let collection = 0;
  let written = 0;
  for (const r of slowest) {
    if (metCollection(r)) collection++;
    else if (nearWrites(r)) written++;
  }
  let first = Infinity;
  let last = -Infinity;
  for (const r of requests) {
    first = Math.min(first, r.sentAt);
    last = Math.max(last, r.sentAt + r.ms);
  }
  const during = collections.filter((c) => c.start >= first && c.start <= last);
  const share = (test: (r: TimedRequest) => boolean): number => (requests.length === 0 ? NaN : requests.filter(test).length / requests.length);
  return {
    requests: requests.length,
    p99,
    slowest: slowest.length,
    collection,
    writes: written,
    neither: slowest.length - collection - written,
    allCollection: share(metCollection),
    allWrites: share(nearWrites),
    collections: during.length,
    scavenges: during.filter((c) => c.kind === SCAVENGE).length,
    meanCollectionMs: during.length === 0 ? NaN : during.reduce((sum, c) => sum + c.ms, 0) / during.length,
  };
}
