/**
 * The behaviour every BlobStore backend must have. Each backend's test file runs this suite
 * against a fresh, empty store of its own.
 */
import { createHash, randomBytes } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobTooLargeError, type BlobInfo, type BlobStore } from './types.js';

export interface BlobStoreFixture {
  store: BlobStore;
  /**
   * How many things the backend holds (files; rows plus large objects and temporary files), so a
   * test can prove that a failed put left nothing behind, not even something no id points at.
   */
  residue(): Promise<number>;
  /** Releases what the fixture holds besides the store; runs after store.close(). */
  dispose?(): Promise<void>;
}

const MB = 1024 * 1024;

/** The close grace (`closeGraceMs`) every fixture's store is built with: short, so that cutting a put takes little time. */
export const TEST_CLOSE_GRACE_MS = 500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function blobStoreConformance(name: string, open: () => Promise<BlobStoreFixture>): void {
  describe(`BlobStore conformance: ${name}`, () => {
    let fixture: BlobStoreFixture;
    let store: BlobStore;
    beforeEach(async () => {
      fixture = await open();
      store = fixture.store;
    });
    afterEach(async () => {
      await store.close();
      await fixture.dispose?.();
    });

    it('streams a multi-megabyte source in many chunks and reads it back whole', async () => {
      const content = randomBytes(5 * MB + 123);
      const source = slices(content, 1, 64 * 1024);
      const before = Date.now();
      const info = await store.put(source.chunks, { contentType: 'video/mp4', maxBytes: 10 * MB });
      expect(source.count()).toBeGreaterThan(100);
      expect(info).toMatchObject({ size: content.length, sha256: sha256(content), contentType: 'video/mp4' });
      expect(info.id).toMatch(/^blob_[0-9a-f]{24}$/);
      expect(info.createdAt).toBeGreaterThanOrEqual(before);
      expect(info.createdAt).toBeLessThanOrEqual(Date.now());
      expect(await store.stat(info.id)).toEqual(info);

      const chunks = await readChunks(await store.read(info.id));
      expect(Buffer.concat(chunks).equals(content)).toBe(true);
      // Streamed, not handed over as one buffer.
      expect(chunks.length).toBeGreaterThan(1);
      expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(MB);
    });

    it('accepts a Node readable stream as the source', async () => {
      const content = randomBytes(300_000);
      const info = await store.put(Readable.from(slices(content, 1000, 50_000).chunks, { objectMode: false }), { contentType: 'audio/mpeg', maxBytes: MB });
      expect(info).toMatchObject({ size: content.length, sha256: sha256(content) });
      expect((await readAll(await store.read(info.id))).equals(content)).toBe(true);
    });

    it('stores small content with putBuffer, including empty content', async () => {
      const png = randomBytes(2048);
      const info = await store.putBuffer(png, 'image/png');
      expect(info).toMatchObject({ size: 2048, sha256: sha256(png), contentType: 'image/png' });
      expect((await readAll(await store.read(info.id))).equals(png)).toBe(true);

      const empty = await store.putBuffer(new Uint8Array(0), 'text/plain');
      expect(empty).toMatchObject({ size: 0, sha256: sha256(Buffer.alloc(0)) });
      expect((await readAll(await store.read(empty.id))).length).toBe(0);
    });

    it('reads inclusive byte ranges: first byte, a middle range across chunks, last byte', async () => {
      const content = randomBytes(600_000);
      const { id } = await store.putBuffer(content, 'application/octet-stream');
      const range = async (start: number, end: number) => readAll(await store.read(id, { start, end }));
      expect((await range(0, 0)).equals(content.subarray(0, 1))).toBe(true);
      expect((await range(200_000, 550_000)).equals(content.subarray(200_000, 550_001))).toBe(true);
      expect((await range(content.length - 1, content.length - 1)).equals(content.subarray(-1))).toBe(true);
      // An end past the last byte is clamped, as HTTP does.
      expect((await range(content.length - 10, content.length + 1000)).equals(content.subarray(-10))).toBe(true);
    });

    it('rejects byte ranges that are malformed or start past the end', async () => {
      const { id } = await store.putBuffer(randomBytes(100), 'application/octet-stream');
      for (const bad of [
        { start: -1, end: 5 },
        { start: 6, end: 5 },
        { start: 1.5, end: 5 },
        { start: 100, end: 200 },
      ]) {
        await expect(store.read(id, bad)).rejects.toBeInstanceOf(RangeError);
      }
    });

    it('rejects a source over maxBytes with BlobTooLargeError, stops reading at once and keeps nothing', async () => {
      const residue = await fixture.residue();
      const source = counted(16, 64 * 1024);
      const put = store.put(source.chunks, { contentType: 'video/mp4', maxBytes: 300_000 });
      await expect(put).rejects.toBeInstanceOf(BlobTooLargeError);
      await expect(put).rejects.toMatchObject({ limit: 300_000 });
      // The fifth 64 KiB chunk crosses 300,000 bytes: nothing after it is pulled, and the source is finished off.
      expect(source.pulled()).toBe(5);
      expect(source.finished()).toBe(true);
      expect(await fixture.residue()).toBe(residue);
      expect(await store.deleteCreatedBefore(Number.MAX_SAFE_INTEGER, 100)).toBe(0);
    });

    it('destroys a readable source that exceeds the limit', async () => {
      const residue = await fixture.residue();
      const source = Readable.from(counted(100, 16 * 1024).chunks, { objectMode: false });
      await expect(store.put(source, { contentType: 'audio/wav', maxBytes: 100_000 })).rejects.toBeInstanceOf(BlobTooLargeError);
      expect(source.destroyed).toBe(true);
      expect(await fixture.residue()).toBe(residue);
    });

    it('accepts a source of exactly maxBytes', async () => {
      const content = randomBytes(200_000);
      const info = await store.put(slices(content, 10_000, 30_000).chunks, { contentType: 'image/png', maxBytes: content.length });
      expect(info.size).toBe(content.length);
    });

    it('keeps nothing when the source errors', async () => {
      const residue = await fixture.residue();
      async function* failing(): AsyncGenerator<Uint8Array> {
        yield randomBytes(300_000);
        yield randomBytes(300_000);
        await Promise.resolve();
        throw new Error('upstream reset');
      }
      await expect(store.put(failing(), { contentType: 'video/mp4', maxBytes: 10 * MB })).rejects.toThrow('upstream reset');
      expect(await fixture.residue()).toBe(residue);
      expect(await store.deleteCreatedBefore(Number.MAX_SAFE_INTEGER, 100)).toBe(0);
    });

    it('answers unknown and malformed ids with undefined and false', async () => {
      const { id } = await store.putBuffer(randomBytes(10), 'text/plain');
      const ids = [
        `blob_${'0'.repeat(24)}`, // well formed, unknown
        '',
        'blob_',
        id.toUpperCase(),
        `${id}.json`,
        `.${id}.partial`,
        `${id}/../${id}`,
        '../../etc/passwd',
        `blob_${'g'.repeat(24)}`,
        `${id}0`,
        `${id}' or '1'='1`,
      ];
      for (const bad of ids) {
        expect(await store.stat(bad)).toBeUndefined();
        expect(await store.read(bad)).toBeUndefined();
        expect(await store.delete(bad)).toBe(false);
      }
      expect(await store.stat(id)).toBeDefined();
    });

    it('deletes a blob once, with everything it held', async () => {
      const residue = await fixture.residue();
      const { id } = await store.putBuffer(randomBytes(400_000), 'image/webp');
      expect(await fixture.residue()).toBeGreaterThan(residue);
      expect(await store.delete(id)).toBe(true);
      expect(await store.stat(id)).toBeUndefined();
      expect(await store.read(id)).toBeUndefined();
      expect(await store.delete(id)).toBe(false);
      expect(await fixture.residue()).toBe(residue);
    });

    it('deletes blobs created before a time, oldest first, at most limit at a time', async () => {
      const residue = await fixture.residue();
      const a = await store.putBuffer(randomBytes(10), 'text/plain');
      const b = await putAfter(store, a);
      const c = await putAfter(store, b);
      expect(await store.deleteCreatedBefore(c.createdAt, 0)).toBe(0);
      expect(await store.deleteCreatedBefore(c.createdAt, 1)).toBe(1);
      expect(await store.stat(a.id)).toBeUndefined();
      expect(await store.stat(b.id)).toBeDefined();
      expect(await store.deleteCreatedBefore(c.createdAt, 10)).toBe(1);
      expect(await store.stat(b.id)).toBeUndefined();
      expect(await store.stat(c.id)).toEqual(c);
      expect(await store.deleteCreatedBefore(c.createdAt + 1, 10)).toBe(1);
      expect(await fixture.residue()).toBe(residue);
    });

    it('keeps concurrent puts apart', async () => {
      const contents = [1, 2, 3, 4].map((n) => randomBytes(n * 300_000));
      const infos = await Promise.all(contents.map((c) => store.put(slices(c, 1000, 100_000).chunks, { contentType: 'video/mp4', maxBytes: 10 * MB })));
      expect(new Set(infos.map((i) => i.id)).size).toBe(4);
      for (const [n, info] of infos.entries()) {
        expect((await readAll(await store.read(info.id))).equals(contents[n]!)).toBe(true);
      }
    });

    it('refuses work once closed', async () => {
      await store.close();
      await expect(store.putBuffer(randomBytes(10), 'text/plain')).rejects.toThrow(/closed/);
      await expect(store.stat(`blob_${'0'.repeat(24)}`)).rejects.toThrow(/closed/);
    });

    it('closes once the puts under way have ended, refusing new ones and destroying their source', async () => {
      const residue = await fixture.residue();
      const arriving = new PassThrough();
      arriving.write(randomBytes(100_000));
      const put = store.put(arriving, { contentType: 'video/mp4', maxBytes: MB });
      await sleep(50);
      let closed = false;
      const closing = store.close().then(() => (closed = true));
      const late = new PassThrough();
      await expect(store.put(late, { contentType: 'video/mp4', maxBytes: MB })).rejects.toMatchObject({ code: 'shutting_down', status: 503 });
      expect(late.destroyed).toBe(true);
      await expect(store.putBuffer(randomBytes(10), 'text/plain')).rejects.toMatchObject({ code: 'shutting_down' });
      await sleep(100);
      expect(closed).toBe(false);
      arriving.end(randomBytes(100_000));
      expect(await put).toMatchObject({ size: 200_000 });
      await closing;
      // Kept whole: the close did not cut it.
      expect(await fixture.residue()).toBeGreaterThan(residue);
    });

    it('cuts the puts still receiving once the close grace has passed: they fail and keep nothing', async () => {
      const residue = await fixture.residue();
      const stalled = new PassThrough();
      stalled.write(randomBytes(50_000));
      // A generator cannot be destroyed: it is cut while it waits.
      async function* silent(): AsyncGenerator<Uint8Array> {
        yield randomBytes(50_000);
        await new Promise(() => undefined);
      }
      const puts = [store.put(stalled, { contentType: 'video/mp4', maxBytes: MB }), store.put(silent(), { contentType: 'video/mp4', maxBytes: MB })].map((put) =>
        put.catch((err: unknown) => err),
      );
      await sleep(50);
      const started = Date.now();
      await store.close();
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(TEST_CLOSE_GRACE_MS - 20);
      expect(waited).toBeLessThan(TEST_CLOSE_GRACE_MS + 2_000);
      expect(await Promise.all(puts)).toMatchObject([{ code: 'shutting_down' }, { code: 'shutting_down' }]);
      expect(stalled.destroyed).toBe(true);
      expect(await fixture.residue()).toBe(residue);
    });

    it('streams a 200 MB upload without holding it in memory', async () => {
      const total = 200 * MB;
      const expected = createHash('sha256');
      const before = settledRss();
      let peak = before;
      // Fresh 64 KiB chunks made only when asked for, as a network upload delivers them. Every
      // 8 MB, RSS is sampled after a full collection: spent chunks waiting for the collector
      // are not "held", while chunks a store keeps are still reachable and still counted.
      async function* lazy(): AsyncGenerator<Uint8Array> {
        for (let n = 0; n * 64 * 1024 < total; n++) {
          if (n % 128 === 0) peak = Math.max(peak, settledRss());
          const chunk = Buffer.alloc(64 * 1024, n % 251);
          chunk.writeUInt32LE(n, 0);
          expected.update(chunk);
          await Promise.resolve();
          yield chunk;
        }
      }
      const info = await store.put(lazy(), { contentType: 'video/mp4', maxBytes: total });
      const after = settledRss();
      peak = Math.max(peak, after);
      expect(info).toMatchObject({ size: total, sha256: expected.digest('hex') });
      const growth = (peak - before) / MB;
      // Reported so a run's log shows the figure, not only that it stayed under the bound.
      console.info(`${name}: 200 MB put grew RSS by ${growth.toFixed(1)} MB at peak (${((after - before) / MB).toFixed(1)} MB after)`);
      expect(growth).toBeLessThan(50);
      expect(await store.delete(info.id)).toBe(true);
    }, 120_000);
  });
}

/** RSS after a full garbage collection (exposed at run time; vitest runs each file in its own process). */
function settledRss(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return process.memoryUsage().rss;
}

function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** `content` as copies of random-sized slices, so no chunk aliases the original. */
function slices(content: Buffer, minChunk: number, maxChunk: number): { chunks: AsyncGenerator<Uint8Array>; count(): number } {
  let count = 0;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (let offset = 0; offset < content.length; ) {
      const size = minChunk + Math.floor(Math.random() * (maxChunk - minChunk + 1));
      count++;
      yield Buffer.from(content.subarray(offset, offset + size));
      offset += size;
      await Promise.resolve(); // arrive asynchronously, as network chunks do
    }
  }
  return { chunks: chunks(), count: () => count };
}

/** A source of `count` chunks that records how many were pulled and whether it was finished off. */
function counted(count: number, size: number): { chunks: AsyncGenerator<Uint8Array>; pulled(): number; finished(): boolean } {
  let pulled = 0;
  let finished = false;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    try {
      for (let n = 0; n < count; n++) {
        pulled++;
        await Promise.resolve();
        yield randomBytes(size);
      }
    } finally {
      finished = true;
    }
  }
  return { chunks: chunks(), pulled: () => pulled, finished: () => finished };
}

/** A put whose createdAt is strictly later than `previous`'s. */
async function putAfter(store: BlobStore, previous: BlobInfo): Promise<BlobInfo> {
  while (Date.now() <= previous.createdAt) await new Promise((resolve) => setTimeout(resolve, 2));
  return store.putBuffer(randomBytes(10), 'text/plain');
}

async function readChunks(stream: NodeJS.ReadableStream | undefined): Promise<Buffer[]> {
  if (stream === undefined) throw new Error('blob not found');
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return chunks;
}

async function readAll(stream: NodeJS.ReadableStream | undefined): Promise<Buffer> {
  return Buffer.concat(await readChunks(stream));
}
