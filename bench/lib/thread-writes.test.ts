import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ThreadWrites } from './thread-writes.js';

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A Node process whose main thread, or a worker thread, writes 4 KiB to `out` at once and then every 100 ms. */
function writer(from: 'main' | 'worker'): { child: ChildProcess; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'thread-writes-'));
  dirs.push(dir);
  const out = join(dir, 'out');
  const loop = `const fs = require('node:fs'); const fd = fs.openSync(${JSON.stringify(out)}, 'w'); const write = () => fs.writeSync(fd, Buffer.alloc(4096)); write(); setInterval(write, 100);`;
  const script = from === 'main' ? loop : `new (require('node:worker_threads').Worker)(${JSON.stringify(loop)}, { eval: true }); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  children.push(child);
  return { child, out };
}

const sampleFor = async ({ child, out }: { child: ChildProcess; out: string }, ms: number): Promise<ReturnType<ThreadWrites['stop']>> => {
  // Sampling starts once the writing thread exists: its first write is there.
  const deadline = Date.now() + 10_000;
  while (!(existsSync(out) && statSync(out).size > 0)) {
    if (Date.now() > deadline) throw new Error('the writer never wrote');
    await new Promise((r) => setTimeout(r, 20));
  }
  const writes = new ThreadWrites(child.pid as number);
  writes.start();
  await new Promise((r) => setTimeout(r, ms));
  return writes.stop();
};

describe('ThreadWrites', () => {
  it.runIf(process.platform === 'linux')('sees the stretches in which a thread other than the main one writes', async () => {
    const before = performance.timeOrigin + performance.now();
    const spans = await sampleFor(writer('worker'), 1_000);
    // Ten writes 100 ms apart are more than the 50 ms that join samples: several stretches, in order, in the sampled second.
    expect(spans.length).toBeGreaterThanOrEqual(4);
    for (const [i, span] of spans.entries()) {
      expect(span.start).toBeGreaterThanOrEqual(before);
      expect(span.end).toBeGreaterThanOrEqual(span.start);
      if (i > 0) expect(span.start).toBeGreaterThan((spans[i - 1] as { end: number }).end);
    }
  }, 20_000);

  it.runIf(process.platform === 'linux')("leaves out the main thread's writes", async () => {
    expect(await sampleFor(writer('main'), 1_000)).toEqual([]);
  }, 20_000);
});
