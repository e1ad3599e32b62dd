/**
 * Blobs as files in one directory, for a single instance or a shared volume.
 *
 *   <dir>/<id>       the content
 *   <dir>/<id>.json  its metadata (BlobInfo); a blob exists exactly when this file does
 *
 * Both are written under a temporary dot-name and renamed into place once complete, content
 * first (and flushed to disk before its rename), so a crash never leaves a half blob under a real
 * id, and metadata never points at content that is not there. Dot-names can never match an id.
 * Close waits for the puts under way (puts-in-flight.ts): a process that exits once its store
 * closed would otherwise cut them halfway.
 */
import { createReadStream, mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { isBlobId, newBlobId } from './blob-id.js';
import { resolveRange } from './byte-range.js';
import { MeteredSource } from './metered-source.js';
import { PutsInFlight } from './puts-in-flight.js';
import { blobStoreClosed } from './store-closed.js';
import type { BlobInfo, BlobRange, BlobSource, BlobStore, PutOptions } from './types.js';

/**
 * Temporary files and metadata-less content are what a crash leaves; deleteCreatedBefore removes
 * them once they are this old, so that a put still writing (or between its two renames) is never
 * swept from under itself.
 */
const LEFTOVER_GRACE_MS = 60 * 60 * 1000;

const SIDECAR = /^(blob_[0-9a-f]{24})\.json$/;
const PARTIAL = /^\.blob_[0-9a-f]{24}(\.json)?\.partial$/;

export interface LocalBlobStoreOptions {
  /** How long close waits for puts still receiving their bytes before it cuts them (see puts-in-flight.ts). */
  closeGraceMs?: number;
}

export class LocalBlobStore implements BlobStore {
  private ready: Promise<void> | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  private readonly puts = new PutsInFlight();

  /** Throws, naming the directory, when it cannot be made or written (see assertUsable). */
  constructor(
    private readonly directory: string,
    private readonly options: LocalBlobStoreOptions = {},
  ) {
    assertUsable(directory);
  }

  async put(source: BlobSource, options: PutOptions): Promise<BlobInfo> {
    const meter = new MeteredSource(source, options.maxBytes);
    return this.puts.run(() => this.write(meter, options.contentType), meter);
  }

  /** Writes a put's bytes as they arrive, then publishes them under a new id. */
  private async write(meter: MeteredSource, contentType: string): Promise<BlobInfo> {
    const id = newBlobId();
    const partialContent = join(this.directory, `.${id}.partial`);
    const partialMeta = join(this.directory, `.${id}.json.partial`);
    try {
      await this.ensureDirectory();
      await writeChunks(partialContent, meter);
      await rename(partialContent, this.contentPath(id));
      const info: BlobInfo = { id, size: meter.size, sha256: meter.sha256(), contentType, createdAt: Date.now() };
      await writeFile(partialMeta, JSON.stringify(info), { flag: 'wx' });
      await rename(partialMeta, this.metaPath(id));
      return info;
    } catch (err) {
      // Whatever stage failed, nothing of this put may stay behind; a failed cleanup must not
      // hide the error that caused it.
      meter.abandon();
      await Promise.allSettled([partialContent, partialMeta, this.contentPath(id)].map((path) => rm(path, { force: true })));
      throw err;
    }
  }

  putBuffer(data: Uint8Array, contentType: string): Promise<BlobInfo> {
    return this.put(Readable.from([data]), { contentType, maxBytes: data.length });
  }

  async stat(id: string): Promise<BlobInfo | undefined> {
    this.assertOpen();
    if (!isBlobId(id)) return undefined;
    let text: string;
    try {
      text = await readFile(this.metaPath(id), 'utf8');
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    return parseInfo(id, text);
  }

  async read(id: string, range?: BlobRange): Promise<NodeJS.ReadableStream | undefined> {
    const info = await this.stat(id);
    if (info === undefined) return undefined;
    const { start, end } = resolveRange(info.size, range);
    // Opening now (rather than letting the stream open lazily) turns a delete that raced us into
    // `undefined`; once open, a later delete cannot cut the read short.
    let handle;
    try {
      handle = await open(this.contentPath(id), 'r');
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    // An empty blob has no byte to start at; a stream without bounds reads its zero bytes.
    return createReadStream(this.contentPath(id), end < start ? { fd: handle } : { fd: handle, start, end });
  }

  async delete(id: string): Promise<boolean> {
    this.assertOpen();
    if (!isBlobId(id)) return false;
    // Metadata first: the blob stops existing in one step, and content left by a crash between
    // the two unlinks is a leftover that deleteCreatedBefore sweeps.
    let existed = true;
    try {
      await unlink(this.metaPath(id));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      existed = false;
    }
    await rm(this.contentPath(id), { force: true });
    return existed;
  }

  async deleteCreatedBefore(before: number, limit: number): Promise<number> {
    this.assertOpen();
    const names = await this.list();
    const due: BlobInfo[] = [];
    for (const name of names) {
      const id = SIDECAR.exec(name)?.[1];
      if (id === undefined) continue;
      const info = await this.stat(id);
      if (info !== undefined && info.createdAt < before) due.push(info);
    }
    due.sort((a, b) => a.createdAt - b.createdAt);
    let deleted = 0;
    for (const { id } of due.slice(0, Math.max(0, Math.floor(limit)))) {
      if (await this.delete(id)) deleted++;
    }
    await this.sweepLeftovers(names, Math.min(before, Date.now() - LEFTOVER_GRACE_MS));
    return deleted;
  }

  close(): Promise<void> {
    // Nothing else is held open between calls; reads in progress own their file handles.
    this.closing ??= (async () => {
      this.closed = true;
      await this.puts.close(this.options.closeGraceMs);
    })();
    return this.closing;
  }

  /** Removes what a crashed put or delete left: temporary files, content without metadata. */
  private async sweepLeftovers(names: string[], olderThan: number): Promise<void> {
    const present = new Set(names);
    for (const name of names) {
      const orphanContent = isBlobId(name) && !present.has(`${name}.json`);
      if (!orphanContent && !PARTIAL.test(name)) continue;
      const path = join(this.directory, name);
      try {
        if ((await lstat(path)).mtimeMs < olderThan) await rm(path, { force: true });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  private async list(): Promise<string[]> {
    try {
      return await readdir(this.directory);
    } catch (err) {
      if (isNotFound(err)) return [];
      throw err;
    }
  }

  private ensureDirectory(): Promise<void> {
    this.ready ??= mkdir(this.directory, { recursive: true }).then(
      () => undefined,
      (err: unknown) => {
        this.ready = undefined; // let a later put try again
        throw err;
      },
    );
    return this.ready;
  }

  private contentPath(id: string): string {
    return join(this.directory, id);
  }

  private metaPath(id: string): string {
    return join(this.directory, `${id}.json`);
  }

  private assertOpen(): void {
    if (this.closed) throw blobStoreClosed();
  }
}

/**
 * Makes the directory and creates (then removes) an empty file in it, so that a directory that
 * cannot be used (a path under a regular file, no permission, a read-only volume) stops start-up
 * with its name, rather than failing every upload and generated image from the first one on. Done
 * once, when the gateway opens the store, hence synchronously: a mkdir and an empty file.
 */
function assertUsable(directory: string): void {
  // A temporary name the leftover sweep removes, should the process die before the unlink.
  const probe = join(directory, `.${newBlobId()}.partial`);
  try {
    mkdirSync(directory, { recursive: true });
    writeFileSync(probe, '', { flag: 'wx' });
    unlinkSync(probe);
  } catch (err) {
    throw new Error(`blobs.directory "${directory}" cannot be used: it must be a directory this process can create and write (${(err as Error).message})`, { cause: err });
  }
}

/** Writes every chunk as it arrives, then flushes to disk so the rename that follows publishes complete content. */
async function writeChunks(path: string, chunks: AsyncIterable<Buffer>): Promise<void> {
  const handle = await open(path, 'wx');
  try {
    for await (const chunk of chunks) {
      // write() may write less than asked (a full disk, a signal); finish the chunk before the next.
      let offset = 0;
      while (offset < chunk.length) {
        const { bytesWritten } = await handle.write(chunk, offset, chunk.length - offset);
        offset += bytesWritten;
      }
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function parseInfo(id: string, text: string): BlobInfo {
  const value = JSON.parse(text) as unknown;
  // Metadata is renamed into place whole, so a malformed file means someone else wrote it.
  if (!isInfo(value) || value.id !== id) throw new Error(`blob ${id}: metadata file is malformed`);
  return { id, size: value.size, sha256: value.sha256, contentType: value.contentType, createdAt: value.createdAt };
}

function isInfo(value: unknown): value is BlobInfo {
  const v = value as Partial<Record<keyof BlobInfo, unknown>> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.id === 'string' &&
    typeof v.size === 'number' &&
    typeof v.sha256 === 'string' &&
    typeof v.contentType === 'string' &&
    typeof v.createdAt === 'number'
  );
}

function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
