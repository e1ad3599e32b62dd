/** How operator commands print: aligned tables and `field value` blocks for people, JSON with --json. */
import { formatMicros } from '../admin/money.js';

export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

/** Columns padded to their widest cell; columns named in `right` are right-aligned (numbers). */
export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>, right: readonly string[] = []): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (right.includes(headers[i] ?? '') ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** `field  value` lines, the fields aligned. */
export function fields(pairs: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

export const credits = (micros: number): string => formatMicros(micros);

/** An ISO time without its milliseconds: 2026-11-22T17:04:51Z. */
export const time = (iso: string): string => iso.replace(/\.\d{3}Z$/, 'Z');

export const orDash = (value: string | null | undefined): string => (value === null || value === undefined || value === '' ? '-' : value);

export function scopeText(scope: { models?: string[]; endpoints?: string[]; sdks?: string[] } | null): string {
  if (scope === null) return '-';
  const parts = (['models', 'endpoints', 'sdks'] as const).flatMap((k) => (scope[k] ? [`${k}=${scope[k].join(',')}`] : []));
  return parts.length > 0 ? parts.join(' ') : '-';
}
