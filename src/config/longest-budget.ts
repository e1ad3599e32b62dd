import type { Config } from './schema.js';

/**
 * The longest a request may run: the default generation budget or a model's own, whichever is
 * longer. What a request holds while it runs (a credit reservation in the store, an in-flight slot
 * in Redis) must outlive it, or a sweep frees it under a request that is still running.
 */
export function longestBudgetMs(config: Config): number {
  return Math.max(config.generation.budget_ms, ...config.models.map((m) => m.budget_ms ?? 0));
}
