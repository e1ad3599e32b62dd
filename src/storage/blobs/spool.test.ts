import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spool } from './spool.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-spool-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function* chunks(parts: string[], failAfter = Infinity): AsyncGenerator<Uint8Array> {
  for (const [i, part] of parts.entries()) {
    await new Promise((r) => setImmediate(r));
    if (i >= failAfter) throw new Error('the client went away');
    yield Buffer.from(part);
  }
}

/** This process's open files in the test's directory (deleted ones included: they still hold their space). */
function openFiles(): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(dir) ? [target] : [];
    } catch {
      return [];
    }
  });
}

describe('spool', () => {
  it('opens nothing for a reader that never starts, and closes what a reader left early', async () => {
    const spooled = await spool(chunks(['abcdef']), dir);
    spooled.read(2);
    for await (const chunk of spooled.read(2)) {
      expect(Buffer.from(chunk).toString()).toBe('ab');
      break;
    }
    await spooled.remove();
    expect(openFiles()).toEqual([]);
  });

  it('gives the bytes back in chunks of the size asked, and leaves nothing once removed', async () => {
    const spooled = await spool(chunks(['ab', 'cdefg', 'h']), dir);
    const read: string[] = [];
    for await (const chunk of spooled.read(3)) read.push(Buffer.from(chunk).toString());
    expect(read).toEqual(['abc', 'def', 'gh']);
    await spooled.remove();
    await spooled.remove();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('leaves no file behind when the source fails', async () => {
    await expect(spool(chunks(['ab', 'cd', 'ef'], 2), dir)).rejects.toThrow('the client went away');
    expect(readdirSync(dir)).toEqual([]);
  });
});
