import { describe, expect, it } from 'vitest';
import type { Config } from './schema.js';
import { longestBudgetMs } from './longest-budget.js';

const config = (budgetMs: number, models: Array<number | undefined>) => ({ generation: { budget_ms: budgetMs }, models: models.map((m) => ({ budget_ms: m })) }) as unknown as Config;

describe('longestBudgetMs', () => {
  it('is the default budget when no model has a longer one', () => {
    expect(longestBudgetMs(config(60_000, [undefined, 30_000]))).toBe(60_000);
  });

  it("is a model's own budget when it is longer than the default", () => {
    expect(longestBudgetMs(config(1_000, [undefined, 120_000]))).toBe(120_000);
  });
});
