/**
 * Usage as reported by the upstream, checked just enough that accounting never sees NaN. The
 * object is passed on as is (details included) so nothing is copied on the hot path.
 */
import type { Usage } from '../../protocol/chat.js';

export function usageOf(value: unknown): Usage | null {
  if (typeof value !== 'object' || value === null) return null;
  const usage = value as Partial<Usage>;
  const prompt = usage.prompt_tokens;
  const completion = usage.completion_tokens;
  if (typeof prompt !== 'number' || typeof completion !== 'number') return null;
  // Some compatible servers leave the total out; the caller's SDK and our ledger both expect it.
  if (typeof usage.total_tokens !== 'number') return { ...usage, prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  return usage as Usage;
}
