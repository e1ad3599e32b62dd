import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_CLOSE_GRACE_MS, blobStoreConformance } from './blob-store.conformance.js';
import { LocalBlobStore } from './local-blob-store.js';

const root = await mkdtemp(join(tmpdir(), 'tollgate-blobs-'));
afterAll(() => rm(root, { recursive: true, force: true }));

let n = 0;
const freshDirectory = () => join(root, `store-${++n}`);

blobStoreConformance('local directory', async () => {
  const directory = freshDirectory();
  const list = async () => readdir(directory).catch(() => []);
  return Promise.resolve({ store: new LocalBlobStore(directory, { closeGraceMs: TEST_CLOSE_GRACE_MS }), residue: async () => (await list()).length });
});

describe('LocalBlobStore', () => {
  it('creates its directory, and leaves only <id> and <id>.json after a put', async () => {
    const directory = join(freshDirectory(), 'nested', 'blobs');
    const store = new LocalBlobStore(directory);
    const { id } = await store.putBuffer(Buffer.from('hello'), 'text/plain');
    expect((await readdir(directory)).sort()).toEqual([id, `${id}.json`]);
    await store.close();
  });

  it('refuses at once a directory it cannot make or write, naming blobs.directory', async () => {
    const blocker = freshDirectory();
    await writeFile(blocker, 'a file where the directory should be');
    for (const directory of [join(blocker, 'blobs'), blocker]) {
      expect(() => new LocalBlobStore(directory)).toThrow(`blobs.directory "${directory}" cannot be used: it must be a directory this process can create and write`);
    }
  });

  it('leaves nothing of its start-up check in the directory', async () => {
    const directory = freshDirectory();
    const store = new LocalBlobStore(directory);
    expect(await readdir(directory)).toEqual([]);
    await store.close();
  });

  it('rejects a put when its directory cannot be made, and destroys the source', async () => {
    const blocker = freshDirectory();
    const store = new LocalBlobStore(join(blocker, 'blobs'));
    // Usable at start, then a file where the directory should be.
    await rm(blocker, { recursive: true });
    await writeFile(blocker, 'a file where the directory should be');
    const source = Readable.from([Buffer.from('data')]);
    await expect(store.put(source, { contentType: 'text/plain', maxBytes: 100 })).rejects.toThrow();
    expect(source.destroyed).toBe(true);
    await store.close();
  });

  it('sweeps what a crash left (partial files, content without metadata) once it is old', async () => {
    const directory = freshDirectory();
    const store = new LocalBlobStore(directory);
    const kept = await store.putBuffer(Buffer.from('kept'), 'text/plain');
    const hex = (c: string) => `blob_${c.repeat(24)}`;
    const leftovers = [`.${hex('a')}.partial`, `.${hex('b')}.json.partial`, hex('c')];
    const fresh = `.${hex('d')}.partial`; // a put still writing
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
    for (const name of [...leftovers, fresh]) await writeFile(join(directory, name), 'x');
    for (const name of leftovers) await utimes(join(directory, name), old, old);
    expect(await store.stat(hex('c'))).toBeUndefined();

    expect(await store.deleteCreatedBefore(kept.createdAt, 10)).toBe(0);
    expect((await readdir(directory)).sort()).toEqual([fresh, kept.id, `${kept.id}.json`].sort());
    await store.close();
  });
});
