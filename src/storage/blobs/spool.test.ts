import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
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

describe('spool', () => {
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
