/**
 * A source received whole into a temporary file before it is written to a store whose writes hold
 * a shared resource. The PostgreSQL blob store writes a blob on one pooled connection: taken while
 * the bytes still arrive, ten slow uploads (a client on a bad link, or one that stalls on purpose)
 * held every connection of the pool, and every blob read and write of the instance waited behind
 * them. Spooled first, a connection is held only for as long as the local disk takes to read.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Every spool file is named this and a random UUID, in the directory given (by default the system's
 * temporary one), so that what a crash left can be told from anything else there (spool-sweep.ts).
 */
export const SPOOL_PREFIX = 'tollgate-spool-';

export interface Spooled {
  /** The bytes again, read from the temporary file in chunks of about `chunkBytes`. */
  read(chunkBytes: number): AsyncIterable<Uint8Array>;
  /** Removes the temporary file; safe to call more than once. */
  remove(): Promise<void>;
}

export async function spool(source: AsyncIterable<Uint8Array>, dir = tmpdir()): Promise<Spooled> {
  const path = join(dir, `${SPOOL_PREFIX}${randomUUID()}`);
  const remove = (): Promise<void> => rm(path, { force: true });
  try {
    await pipeline(Readable.from(source, { objectMode: false }), createWriteStream(path, { flags: 'wx', mode: 0o600 }));
  } catch (err) {
    await remove();
    throw err;
  }
  return { read: (chunkBytes) => readLazily(path, chunkBytes), remove };
}

/** Opens the file only when the first chunk is asked for, and closes it however the reading ends: a reader that never starts (no connection to write to) holds no descriptor. */
async function* readLazily(path: string, chunkBytes: number): AsyncGenerator<Uint8Array> {
  const stream = createReadStream(path, { highWaterMark: chunkBytes });
  try {
    for await (const chunk of stream) yield chunk as Uint8Array;
  } finally {
    stream.destroy();
  }
}
