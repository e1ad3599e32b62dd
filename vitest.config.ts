import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Most test time is spent waiting (timers, sockets, child processes), not computing: more
    // workers than the two cores keep the suite well inside CI's time limit.
    maxWorkers: 3,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
