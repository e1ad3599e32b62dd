/**
 * The tokens a request really used, as its settlement reports them, made fit for a window: the
 * counts come from upstreams, and one that reports 1e400 (Infinity once parsed) or a fraction
 * would otherwise put Infinity, then NaN, in the key's tokens-per-minute total. Null (keep the
 * reservation) when there is no usable count.
 */
const MAX_TOKENS = 2 ** 32;

export function settledTokens(tokens: number | null): number | null {
  if (tokens === null || !(tokens >= 0)) return null;
  return Math.min(Math.round(tokens), MAX_TOKENS);
}
