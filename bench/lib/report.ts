/** The benchmark's report: a table per scenario, then the ratios against the targets. */
import { SCENARIOS, type TargetName } from './plan.js';
import { fmt, median, ratio } from './stats.js';

export interface Row {
  scenario: string;
  target: TargetName;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  cpuMicros: number;
  /** The part of cpuMicros spent in user space (JavaScript, V8, native code), not in the kernel (median). */
  userMicros: number;
  /** Read and write system calls of the server per request, all its threads (median; NaN where /proc does not tell). */
  syscalls: number;
  /** Share of the server's core the hypervisor gave to other guests during the runs (median, %). */
  stealPct: number;
  errors: number;
  /** Each repetition's own figures, in order: the targets' ratios pair repetition i with repetition i. */
  repetitions?: RepetitionFigures[];
}

/** What the targets' ratios need of one repetition of one target. */
export interface RepetitionFigures {
  rps: number;
  cpuMicros: number;
  p99: number;
}

export interface Report {
  date: string;
  machine: string;
  pinned: boolean;
  /** Whether the cache neighbour ran beside the load generator during the runs (--neighbour). */
  neighbour?: boolean;
  durationSeconds: number;
  repetitions: number;
  peer: string;
  rows: Row[];
}

interface Check {
  what: string;
  value: string;
  target: string;
  pass: boolean | undefined;
}

/**
 * A measure of Tollgate against another target: the median of the repetitions' own values (each
 * repetition measures the targets back to back, so both meet the same state of the machine), and
 * those values. Without repetitions on both sides (a report of an earlier version), the measure of
 * the two medians.
 */
function paired(a: Row | undefined, b: Row | undefined, measure: (a: RepetitionFigures, b: RepetitionFigures) => number | undefined): Paired {
  if (a === undefined || b === undefined) return { value: undefined, each: [], ofMedians: false };
  const ra = a.repetitions;
  const rb = b.repetitions;
  if (ra === undefined || rb === undefined || ra.length !== rb.length || ra.length === 0) return { value: measure(a, b), each: [], ofMedians: true };
  // A repetition without a value keeps its place (shown as –), so that the others stay in order.
  const each = ra.map((x, i) => measure(x, rb[i] as RepetitionFigures));
  const known = each.filter((v): v is number => v !== undefined);
  return { value: known.length === 0 ? undefined : median(known), each, ofMedians: false };
}

interface Paired {
  value: number | undefined;
  /** Each repetition's own value, in order. */
  each: Array<number | undefined>;
  /** The repetitions could not be paired (a report of an earlier version): the value is of the medians. */
  ofMedians: boolean;
}

function checks(report: Report): Check[] {
  const at = (scenario: string, target: TargetName): Row | undefined => report.rows.find((r) => r.scenario === scenario && r.target === target);
  const out: Check[] = [];
  const add = (what: string, { value, each, ofMedians }: Paired, target: string, pass: (v: number) => boolean, digits = 2, unit = '×'): void => {
    const detail = ofMedians ? ' (of the medians)' : each.length > 1 ? ` (${each.map((v) => fmt(v, digits)).join(', ')})` : '';
    const shown = value === undefined ? '–' : `${fmt(value, digits)}${unit}${detail}`;
    out.push({ what, value: shown, target, pass: value === undefined ? undefined : pass(value) });
  };
  const throughput = (x: RepetitionFigures, y: RepetitionFigures): number | undefined => ratio(x.rps, y.rps);
  add('Throughput at 32 connections, Tollgate / lower bound', paired(at('c32', 'tollgate'), at('c32', 'lower-bound'), throughput), '≥ 0.7×', (v) => v >= 0.7);
  add('Throughput at 32 connections, Tollgate / peer', paired(at('c32', 'tollgate'), at('c32', 'portkey'), throughput), '≥ 15×', (v) => v >= 15, 1);
  add('CPU per request at 32 connections, Tollgate / lower bound', paired(at('c32', 'tollgate'), at('c32', 'lower-bound'), (x, y) => ratio(x.cpuMicros, y.cpuMicros)), '≤ 1.5×', (v) => v <= 1.5);
  add('Streaming throughput at 32 connections, Tollgate / lower bound', paired(at('stream-c32', 'tollgate'), at('stream-c32', 'lower-bound'), throughput), '≥ 0.7×', (v) => v >= 0.7);
  const excess = (x: RepetitionFigures, y: RepetitionFigures): number | undefined => (Number.isFinite(x.p99) && Number.isFinite(y.p99) ? x.p99 - y.p99 : undefined);
  add('p99 at 1,000 requests/s, Tollgate − lower bound', paired(at('rate-1000', 'tollgate'), at('rate-1000', 'lower-bound'), excess), '≤ 1 ms', (v) => v <= 1, 2, ' ms');
  return out;
}

export function renderMarkdown(report: Report): string {
  const lines = [
    `Benchmark of ${report.date} on ${report.machine}; ${report.pinned ? 'servers under test pinned to one core, load generator and mock upstream to the other' : 'no CPU pinning'}${report.neighbour === true ? '; with the cache neighbour (--neighbour) running beside the load generator' : ''}; median of ${report.repetitions} runs of ${report.durationSeconds} s; peer ${report.peer}.`,
    '',
  ];
  for (const scenario of SCENARIOS) {
    const rows = report.rows.filter((r) => r.scenario === scenario.id);
    if (rows.length === 0) continue;
    lines.push(`**${scenario.title}**`, '', '| target | requests/s | p50 ms | p90 ms | p99 ms | server CPU µs/request | of which user | system calls/request | stolen % |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of rows) lines.push(`| ${r.target} | ${fmt(r.rps)} | ${fmt(r.p50, 2)} | ${fmt(r.p90, 2)} | ${fmt(r.p99, 2)} | ${fmt(r.cpuMicros)} | ${fmt(r.userMicros)} | ${fmt(r.syscalls, 1)} | ${fmt(r.stealPct, 1)} |`);
    lines.push('');
  }
  lines.push('**Against the targets**', '', '| measure | value | target | met |', '|---|---:|---:|:---:|');
  for (const c of checks(report)) lines.push(`| ${c.what} | ${c.value} | ${c.target} | ${c.pass === undefined ? '–' : c.pass ? 'yes' : 'no'} |`);
  lines.push(
    '',
    'In "Against the targets", each value is the median of the repetitions\' own values, shown after it in brackets: a repetition measures the targets back to back, so that both sides of a ratio meet the same state of the machine, where the medians of the tables above may come from different repetitions. "direct" is the mock upstream alone; its CPU and system-call columns are the mock\'s own. "Of which user" is the part of the server\'s CPU time spent in user space (its JavaScript, V8, native modules), the rest being the kernel\'s (system calls, the loopback network stack): /proc/PID/stat, all threads. "System calls" counts the server\'s reads and writes of every kind (sockets, files; /proc/PID/io), all threads: unlike CPU time it does not move with the machine\'s noise. "Stolen" is the share of the server\'s core that the hypervisor gave to other guests during the runs (/proc/stat, median over repetitions): while it lasts every process on the core stalls, so a few percent of it can decide a p99. Latencies are as seen by the load generator: autocannon (whole milliseconds) for the closed-loop runs, a fixed-rate driver with microsecond timing for the 1,000 requests/s run, counted after 2 s of warm-up on the same connections. The peer does not take part in streaming: Portkey 1.15.2 fails every streamed request on Node 20 here (TypeError: immutable, in its response handling).',
    '',
  );
  return lines.join('\n');
}
