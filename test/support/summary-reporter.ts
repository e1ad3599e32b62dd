/**
 * Prints one plain closing line, "tests: N passed, N failed, N skipped", after vitest's own
 * summary, so that CI logs carry a count any reader (or tool) understands.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++;
    }
    process.stdout.write(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
