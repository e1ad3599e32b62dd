/**
 * A count of tokens as an upstream reported it, made fit for a ledger row and a rate-limit window:
 * whole, at least 0, at most MAX_TOKEN_COUNT (far above any context window); null when there is
 * no usable count. An upstream that reports 10.5, -3 or 1e400 (Infinity once parsed) would
 * otherwise make PostgreSQL refuse a settlement (and hold up every charge queued behind it) or put
 * Infinity, then NaN, in a key's tokens-per-minute total.
 */
export const MAX_TOKEN_COUNT = 2 ** 32;

export function usableTokenCount(tokens: number | null): number | null {
  if (tokens === null || !(tokens >= 0)) return null;
  return Math.min(Math.round(tokens), MAX_TOKEN_COUNT);
}
