import { describe, expect, it } from 'vitest';
import { allocatedBytes, allocationsWhile, type AllocationNode } from './allocation-profile.js';
import { withInspected } from './inspected-child.js';

const ROOT = '/srv/tollgate';
const node = (functionName: string, url: string, selfSize: number, children: AllocationNode[] = [], lineNumber = 0): AllocationNode => ({
  callFrame: { functionName, url, lineNumber },
  selfSize,
  children,
});

describe('allocatedBytes', () => {
  // One function of the project reached by two paths, a package, a native function and the root (which allocates nothing).
  const profile = {
    head: node('(root)', '', 0, [
      node('handle', `file://${ROOT}/dist/http/routes/chat.js`, 100, [
        node('feed', `file://${ROOT}/dist/providers/openai/sse-scanner.js`, 300, [], 54),
        node('parseHeaders', `file://${ROOT}/node_modules/undici/lib/core/util.js`, 40, [], 435),
      ]),
      node('feed', `file://${ROOT}/dist/providers/openai/sse-scanner.js`, 200, [node('Map', '', 60)], 54),
    ]),
  };

  it('adds up each function over every path that reaches it, and each place, as selfTimes names them', () => {
    const bytes = allocatedBytes(profile, ROOT);
    expect(bytes.totalBytes).toBe(700);
    expect(bytes.byFunction.get('feed dist/providers/openai/sse-scanner.js:55')).toBe(500);
    expect(bytes.byFunction.get('parseHeaders undici:436')).toBe(40);
    expect(bytes.byFunction.get('Map (native)')).toBe(60);
    expect(bytes.byPlace.get('dist/providers/openai/sse-scanner.js')).toBe(500);
    expect(bytes.byPlace.get('undici')).toBe(40);
    expect(bytes.byPlace.get('(native)')).toBe(60);
    expect(bytes.byPlace.has('(root)')).toBe(false);
  });

  it('walks a call tree deeper than the stack would allow a recursive walk', () => {
    let head = node('leaf', `${ROOT}/dist/a.js`, 1);
    for (let i = 0; i < 100_000; i++) head = node('step', `${ROOT}/dist/a.js`, 0, [head]);
    expect(allocatedBytes({ head }, ROOT).totalBytes).toBe(1);
  });
});

describe('allocationsWhile', () => {
  it('records what a process started with --inspect allocates while the work runs, short-lived objects included', async () => {
    // Every array is garbage at once: only a profile that keeps collected objects shows them.
    const churn = 'let kept = 0; function allocateForTheProfiler() { for (let i = 0; i < 2000; i++) kept += new Array(64).fill(i).length; } setInterval(allocateForTheProfiler, 1);';
    const { profile, result } = await withInspected(churn, (port) => allocationsWhile(port, 1_024, () => new Promise<string>((r) => setTimeout(() => r('done'), 800))));
    expect(result).toBe('done');
    const bytes = allocatedBytes(profile, '/');
    const churned = [...bytes.byFunction].find(([name]) => name.startsWith('allocateForTheProfiler '))?.[1] ?? 0;
    // Each call allocates about a megabyte; a busy machine may run few calls, but not none in 800 ms.
    expect(churned).toBeGreaterThan(1_000_000);
    expect(churned / bytes.totalBytes).toBeGreaterThan(0.5);
  }, 20_000);
});
