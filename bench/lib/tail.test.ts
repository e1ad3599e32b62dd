import { describe, expect, it } from 'vitest';
import { SCAVENGE } from './gc-recorder.js';
import { tailSources, type TimedRequest } from './tail.js';

// 1,000 requests sent a millisecond apart from t = 10,000, each answered in 1 ms, but ten slow ones.
function run(slow: Record<number, number>): TimedRequest[] {
  return Array.from({ length: 1_000 }, (_, i) => ({ sentAt: 10_000 + i, ms: slow[i] ?? 1 }));
}

describe('tailSources', () => {
  const slow = { 100: 6, 101: 5, 300: 7, 500: 6, 700: 5, 701: 6, 702: 5, 900: 8, 901: 5, 950: 9 };
  const requests = run(slow);
  // A collection from 10,099 to 10,100.5 holds requests 99–100 (in flight) and 101–103 (sent within 3 ms of its end).
  const collections = [
    { start: 10_099, ms: 1.5, kind: SCAVENGE },
    { start: 10_299.5, ms: 1, kind: 4 },
    // Before the first request: not counted among the run's collections.
    { start: 9_000, ms: 4, kind: SCAVENGE },
  ];
  // Another thread wrote from 10,690 to 10,695: requests 670–715 were sent within 20 ms of it.
  const writes = [{ start: 10_690, end: 10_695 }];

  it('takes the slowest 1% and says what each met: a collection first, else writes, else neither', () => {
    const t = tailSources(requests, collections, writes);
    expect(t.requests).toBe(1_000);
    expect(t.slowest).toBe(10);
    expect(t.p99).toBe(1);
    // 100 and 101 (the first collection), 300 (the second).
    expect(t.collection).toBe(3);
    // 700, 701, 702.
    expect(t.writes).toBe(3);
    // 500, 900, 901, 950.
    expect(t.neither).toBe(4);
  });

  it('gives the share of all requests that met the same, and the collections of the run only', () => {
    const t = tailSources(requests, collections, writes);
    // 98–103 (answered at or after 10,099, sent by 10,103.5) and 299–303: eleven requests.
    expect(t.allCollection * 1_000).toBeCloseTo(11, 9);
    // Sent from 10,670 to 10,715: 46 requests.
    expect(t.allWrites * 1_000).toBeCloseTo(46, 9);
    expect(t.collections).toBe(2);
    expect(t.scavenges).toBe(1);
    expect(t.meanCollectionMs).toBeCloseTo(1.25);
  });

  it('takes the windows it is given', () => {
    const t = tailSources(requests, collections, writes, { afterCollectionMs: 0, nearWritesMs: 0 });
    // 101 was sent after the first collection ended; no slow request was sent while the thread wrote.
    expect(t.collection).toBe(2);
    expect(t.writes).toBe(0);
    expect(t.neither).toBe(8);
  });

  it('takes 1% of the requests, rounded up, however many share the slowest latency', () => {
    const t = tailSources(run({ 10: 5, 20: 5, 30: 5, 40: 5, 50: 5, 60: 5, 70: 5, 80: 5, 90: 5, 95: 5, 96: 5 }), [], []);
    expect(t.p99).toBe(5);
    expect(t.slowest).toBe(10);
    expect(t.neither).toBe(10);
    expect(tailSources(run({}).slice(0, 150), [], []).slowest).toBe(2);
  });
});
