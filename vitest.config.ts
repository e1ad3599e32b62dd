import { randomBytes } from 'node:crypto';
import { defineConfig } from 'vitest/config';

// Names this run's PostgreSQL schemas, for the workers (env) and the teardown (this process).
process.env.TOLLGATE_TEST_RUN ??= randomBytes(4).toString('hex');

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Most test time is spent waiting (timers, sockets, child processes), not computing: more
    // workers than the two cores keep the suite well inside CI's time limit.
    maxWorkers: 3,
    env: { TOLLGATE_TEST_RUN: process.env.TOLLGATE_TEST_RUN },
    globalSetup: ['./test/support/global-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
