import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spool } from './spool.js';
import { SPOOL_LEFTOVER_AGE_MS, sweepSpool } from './spool-sweep.js';

const root = mkdtempSync(join(tmpdir(), 'tollgate-spool-sweep-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);

async function* bytes(text: string): AsyncGenerator<Uint8Array> {
  await Promise.resolve();
  yield Buffer.from(text);
}

describe('sweepSpool', () => {
  it('removes the spool files a crash left once they are an hour old, and nothing else', async () => {
    const dir = mkdtempSync(join(root, 'dir-'));
    // A put cut short by a crash: spooled, never removed, long ago.
    await spool(bytes('left by a crash'), dir);
    const [crashed] = readdirSync(dir);
    utimesSync(join(dir, crashed!), twoHoursAgo, twoHoursAgo);
    // A live put's file, just written.
    await spool(bytes('still being received'), dir);
    const live = readdirSync(dir).find((name) => name !== crashed)!;
    // Old things in the same directory that are not the spool's files.
    const outside = mkdtempSync(join(root, 'outside-'));
    writeFileSync(join(outside, 'target'), 'not ours');
    const others = ['tollgate-spool-notauuid', `tollgate-spool-${randomUUID()}.bak`, `x-tollgate-spool-${randomUUID()}`, 'other.tmp'];
    for (const name of others) writeFileSync(join(dir, name), 'x');
    const linked = `tollgate-spool-${randomUUID()}`;
    symlinkSync(join(outside, 'target'), join(dir, linked));
    const directory = `tollgate-spool-${randomUUID()}`;
    mkdirSync(join(dir, directory));
    for (const name of [...others, directory]) utimesSync(join(dir, name), twoHoursAgo, twoHoursAgo);

    expect(await sweepSpool(dir)).toBe(1);
    expect(readdirSync(dir).sort()).toEqual([live, ...others, linked, directory].sort());
    expect(readdirSync(outside)).toEqual(['target']);
    expect(await sweepSpool(dir)).toBe(0);
  });

  it('leaves a file younger than the age given', async () => {
    const dir = mkdtempSync(join(root, 'dir-'));
    await spool(bytes('recent'), dir);
    const past = new Date(Date.now() - SPOOL_LEFTOVER_AGE_MS + 60_000);
    utimesSync(join(dir, readdirSync(dir)[0]!), past, past);
    expect(await sweepSpool(dir)).toBe(0);
    expect(await sweepSpool(dir, 30_000)).toBe(1);
    expect(readdirSync(dir)).toEqual([]);
  });
});
