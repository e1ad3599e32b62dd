/**
 * Time the hypervisor gave a core to other guests ("steal"), from /proc/stat. On a shared virtual
 * machine it comes and goes in bursts of tens of milliseconds, and while it lasts every process on
 * the core stalls: a run with more than a few percent of steal says more about the neighbours than
 * about the server, above all in its latency tail. The report prints it beside every figure.
 */
import { readFileSync } from 'node:fs';

export interface CoreTicks {
  steal: number;
  total: number;
}

/** The counters of one core, or of all cores when `core` is undefined; undefined without /proc. */
export function coreTicks(core: number | undefined): CoreTicks | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/stat', 'utf8');
  } catch {
    return undefined;
  }
  const label = core === undefined ? 'cpu' : `cpu${core}`;
  const line = stat.split('\n').find((l) => l.startsWith(`${label} `));
  if (line === undefined) return undefined;
  // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user.
  const fields = line.trim().split(/\s+/).slice(1, 9).map(Number);
  return { steal: fields[7] ?? 0, total: fields.reduce((sum, v) => sum + v, 0) };
}

/** The share of the interval (0–1) stolen, or NaN when it cannot be told. */
export function stolenShare(before: CoreTicks | undefined, after: CoreTicks | undefined): number {
  if (before === undefined || after === undefined || after.total <= before.total) return NaN;
  return (after.steal - before.steal) / (after.total - before.total);
}
