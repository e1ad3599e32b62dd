import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SCAVENGE, collectionsFile, readCollections, recordCollections } from './gc-recorder.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('recordCollections', () => {
  it('writes each collection with its wall-clock start and length, for readCollections to read back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gc-recorder-'));
    dirs.push(dir);
    const file = collectionsFile(dir, process.pid);
    const before = performance.timeOrigin + performance.now();
    const stop = recordCollections(file);
    // Garbage enough for several young-generation collections.
    let kept = 0;
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 20_000; i++) kept += new Array(32).fill(i).length;
      // Node reports collections from a later turn of the event loop.
      await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => setTimeout(r, 50));
    stop();
    const after = performance.timeOrigin + performance.now();
    expect(kept).toBeGreaterThan(0);
    const collections = readCollections(file);
    expect(collections.length).toBeGreaterThan(0);
    for (const c of collections) {
      expect(c.start).toBeGreaterThanOrEqual(before);
      expect(c.start).toBeLessThanOrEqual(after);
      expect(c.ms).toBeGreaterThanOrEqual(0);
      expect(c.ms).toBeLessThan(after - before);
    }
    // The garbage above is young: some of its collections are scavenges.
    expect(collections.some((c) => c.kind === SCAVENGE)).toBe(true);
  });

  it('reads no collections from a file that was never written', () => {
    expect(readCollections(join(tmpdir(), 'no-such-dir-for-gc-recorder', 'gc-1.jsonl'))).toEqual([]);
  });
});
