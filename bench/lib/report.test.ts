import { describe, expect, it } from 'vitest';
import { renderMarkdown, type Report, type Row } from './report.js';
import type { TargetName } from './plan.js';
import { fmt } from './stats.js';

function row(scenario: string, target: TargetName, reps: Array<[rps: number, cpu: number, p99: number]>, withRepetitions = true): Row {
  const mid = [...reps].sort((a, b) => a[0] - b[0])[Math.floor(reps.length / 2)] as [number, number, number];
  const sorted = (i: 0 | 1 | 2): number => ([...reps].map((r) => r[i]).sort((a, b) => a - b)[Math.floor(reps.length / 2)] as number);
  return {
    scenario, target, rps: mid[0], p50: 1, p90: 2, p99: sorted(2), cpuMicros: sorted(1), userMicros: 1, syscalls: 4, stealPct: 0, errors: 0,
    ...(withRepetitions ? { repetitions: reps.map(([rps, cpuMicros, p99]) => ({ rps, cpuMicros, p99 })) } : {}),
  };
}

function report(rows: Row[]): Report {
  return { date: '2026-11-27T14:06:35.416Z', machine: 'test', pinned: true, durationSeconds: 8, repetitions: 3, peer: 'none', rows };
}

const targetLine = (markdown: string, what: string): string | undefined => markdown.split('\n').find((l) => l.startsWith(`| ${what} |`));

describe('renderMarkdown: the targets', () => {
  // The c32 figures of the run of 2026-11-27T14:06, whose guest changed speed between repetitions.
  const c32 = [
    row('c32', 'lower-bound', [[5_059, 182, 18], [5_309, 179, 15], [9_298, 90, 8]]),
    row('c32', 'tollgate', [[3_150, 316, 38], [6_244, 158, 13], [6_409, 152, 12]]),
  ];

  it('takes each ratio within a repetition, then the median, and shows each repetition\'s', () => {
    const markdown = renderMarkdown(report(c32));
    // The medians of the table (6,244 against 5,309) would say 1.18×, from two different repetitions.
    expect(targetLine(markdown, 'Throughput at 32 connections, Tollgate / lower bound')).toBe('| Throughput at 32 connections, Tollgate / lower bound | 0.69× (0.62, 1.18, 0.69) | ≥ 0.7× | no |');
    expect(targetLine(markdown, 'CPU per request at 32 connections, Tollgate / lower bound')).toBe('| CPU per request at 32 connections, Tollgate / lower bound | 1.69× (1.74, 0.88, 1.69) | ≤ 1.5× | no |');
  });

  it('takes the p99 excess within a repetition too', () => {
    const markdown = renderMarkdown(report([
      row('rate-1000', 'lower-bound', [[1_000, 206, 5], [1_000, 198, 9], [1_000, 214, 4]]),
      row('rate-1000', 'tollgate', [[1_000, 420, 6], [1_000, 430, 8], [1_000, 501, 12]]),
    ]));
    // The medians (8 against 5) would say +3.00 ms.
    expect(targetLine(markdown, 'p99 at 1,000 requests/s, Tollgate − lower bound')).toBe('| p99 at 1,000 requests/s, Tollgate − lower bound | 1.00 ms (1.00, -1.00, 8.00) | ≤ 1 ms | yes |');
  });

  it('keeps the place of a repetition without a value', () => {
    const markdown = renderMarkdown(report([
      row('c32', 'lower-bound', [[10_000, 100, 5], [0, 100, 5], [10_000, 100, 5]]),
      row('c32', 'tollgate', [[7_000, 140, 6], [6_000, 140, 6], [8_000, 140, 6]]),
    ]));
    expect(targetLine(markdown, 'Throughput at 32 connections, Tollgate / lower bound')).toBe('| Throughput at 32 connections, Tollgate / lower bound | 0.75× (0.70, –, 0.80) | ≥ 0.7× | yes |');
  });

  it('falls back to the medians for a report without repetitions, and says – for a target not run', () => {
    const markdown = renderMarkdown(report([
      row('c32', 'lower-bound', [[10_000, 100, 5]], false),
      row('c32', 'tollgate', [[8_000, 140, 6]], false),
    ]));
    expect(targetLine(markdown, 'Throughput at 32 connections, Tollgate / lower bound')).toBe('| Throughput at 32 connections, Tollgate / lower bound | 0.80× (of the medians) | ≥ 0.7× | yes |');
    expect(targetLine(markdown, 'Throughput at 32 connections, Tollgate / peer')).toBe('| Throughput at 32 connections, Tollgate / peer | – | ≥ 15× | – |');
  });
});

describe('renderMarkdown: the run', () => {
  it('says when the cache neighbour ran, and says nothing of it otherwise', () => {
    const rows = [row('c32', 'lower-bound', [[10_000, 100, 5]]), row('c32', 'tollgate', [[8_000, 140, 6]])];
    expect(renderMarkdown({ ...report(rows), neighbour: true })).toContain('with the cache neighbour (--neighbour) running beside the load generator');
    expect(renderMarkdown(report(rows))).not.toContain('neighbour');
  });
});

describe('fmt', () => {
  it('shows a value that rounds to zero as zero, without a minus sign', () => {
    expect(fmt(-0.004, 2)).toBe('0.00');
    expect(fmt(-0.006, 2)).toBe('-0.01');
    expect(fmt(1234.5)).toBe('1,235');
    expect(fmt(undefined)).toBe('–');
  });
});
