/** Medians over repetitions, percentiles of latencies, and ratios that stay readable when a figure is missing. */
export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The value at the `p`th percentile's rank of values sorted in ascending order (nearest rank). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

export function ratio(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? undefined : a / b;
}

export function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  // A value that rounds to zero is shown as 0, not as "-0.00".
  const shown = Math.abs(value) < 0.5 / 10 ** digits ? 0 : value;
  return shown.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
