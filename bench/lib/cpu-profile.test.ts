import { describe, expect, it } from 'vitest';
import { perRequest, placeOf, profileWhile, selfTimes, type CpuProfile } from './cpu-profile.js';
import { withInspected } from './inspected-child.js';

const ROOT = '/srv/tollgate';
const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber });

describe('placeOf', () => {
  it('names a package by its folder under node_modules, scoped or not, however deep', () => {
    expect(placeOf(frame('_resume', `file://${ROOT}/node_modules/undici/lib/dispatcher/client.js`), ROOT)).toBe('undici');
    expect(placeOf(frame('x', `${ROOT}/node_modules/@fastify/multipart/index.js`), ROOT)).toBe('@fastify/multipart');
    expect(placeOf(frame('x', `${ROOT}/node_modules/a/node_modules/b/lib/c.js`), ROOT)).toBe('b');
  });

  it('names a file of the project by its path under the root, and Node or V8 by their own names', () => {
    expect(placeOf(frame('batches', `file://${ROOT}/dist/providers/openai/stream.js`), ROOT)).toBe('dist/providers/openai/stream.js');
    expect(placeOf(frame('emit', 'node:events'), ROOT)).toBe('node:events');
    expect(placeOf(frame('(garbage collector)', ''), ROOT)).toBe('(garbage collector)');
    expect(placeOf(frame('writev', ''), ROOT)).toBe('(native)');
    expect(placeOf(frame('', ''), ROOT)).toBe('(native)');
  });
});

describe('selfTimes', () => {
  // Node 1 is the root; 2 is our code, 3 and 4 two functions of one package, 5 idle, 6 the GC, 7 a native function.
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', '') },
      { id: 2, callFrame: frame('batches', `file://${ROOT}/dist/stream.js`, 45) },
      { id: 3, callFrame: frame('_resume', `file://${ROOT}/node_modules/undici/lib/client.js`, 588) },
      { id: 4, callFrame: frame('parseHeaders', `file://${ROOT}/node_modules/undici/lib/util.js`, 435) },
      { id: 5, callFrame: frame('(idle)', '') },
      { id: 6, callFrame: frame('(garbage collector)', '') },
      { id: 7, callFrame: frame('writev', '') },
    ],
    // Samples at 1,000, 1,100, 1,140, 1,640, 1,700, 1,730, 1,750 and 2,000; the profile ends at 2,100.
    startTime: 900,
    endTime: 2_100,
    samples: [2, 3, 5, 4, 2, 6, 7, 5],
    timeDeltas: [100, 100, 40, 500, 60, 30, 20, 250],
  };

  it('gives each sample the time until the next one, the last until the end, by function and by place, idle apart', () => {
    const times = selfTimes(profile, ROOT);
    expect(times.totalMicros).toBe(1_100);
    expect(times.idleMicros).toBe(500 + 100);
    expect(times.byFunction.get('batches dist/stream.js:46')).toBe(100 + 30);
    expect(times.byFunction.get('_resume undici:589')).toBe(40);
    expect(times.byFunction.get('parseHeaders undici:436')).toBe(60);
    expect(times.byPlace.get('undici')).toBe(100);
    expect(times.byPlace.get('(garbage collector)')).toBe(20);
    expect(times.byFunction.get('(garbage collector)')).toBe(20);
    expect(times.byFunction.get('writev (native)')).toBe(250);
    expect(times.byPlace.get('(native)')).toBe(250);
    expect(times.byPlace.has('(idle)')).toBe(false);
    expect([...times.byPlace.values()].reduce((a, b) => a + b, 0)).toBe(times.totalMicros - times.idleMicros);
  });

  it('lists the largest first, divided by the requests', () => {
    const times = selfTimes(profile, ROOT);
    expect(perRequest(times.byPlace, 10, 2)).toEqual([
      ['(native)', 25],
      ['dist/stream.js', 13],
    ]);
  });
});

describe('profileWhile', () => {
  it('records the profile of a process started with --inspect while the work runs', async () => {
    const busy = 'function spinForTheProfiler() { const end = Date.now() + 5; while (Date.now() < end); } setInterval(spinForTheProfiler, 1);';
    const { profile, result } = await withInspected(busy, (port) => profileWhile(port, 100, () => new Promise<string>((r) => setTimeout(() => r('done'), 800))));
    expect(result).toBe('done');
    const times = selfTimes(profile, '/');
    expect(times.totalMicros).toBeGreaterThan(400_000);
    // The child spins five of every six milliseconds or so; on a machine busy with other tests it may get far less.
    const spin = [...times.byFunction].find(([name]) => name.startsWith('spinForTheProfiler '));
    expect((spin?.[1] ?? 0) / times.totalMicros).toBeGreaterThan(0.05);
  }, 20_000);
});
