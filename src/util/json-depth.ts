/**
 * How deeply a request body may nest objects and arrays. JSON.parse accepts any depth, but the
 * gateway's own recursive steps (the Idempotency-Key fingerprint, JSON.stringify of the upstream
 * body) run out of stack a few thousand levels down, which a 10 KB body reaches: refused at the
 * door it is the caller's 400, not a gateway fault after admission. No real request comes near it
 * (OpenAI's structured outputs allow 10 levels of schema).
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether a parsed JSON value nests objects and arrays more than `max` deep. It walks the value,
 * not its text: a request's characters are mostly inside a few strings, so its nodes are far fewer
 * (0.04 µs for the benchmark's body, 0.2 µs for a 3.6 KB conversation, against 1.8 µs for a scan
 * of that conversation's text). The recursion stops at `max`, so it cannot overflow itself.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max === 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (nestsDeeperThan(value[i], max - 1)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) if (nestsDeeperThan(record[key], max - 1)) return true;
  return false;
}
