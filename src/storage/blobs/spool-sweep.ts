/**
 * Removes what a crash left of the spool (spool.ts): a process killed while an upload was being
 * received, or written to PostgreSQL, leaves its temporary file behind, and nothing else would ever
 * remove it. Run when the PostgreSQL blob store opens.
 *
 * Only the spool's own files are touched: regular files (not links, not directories) named exactly
 * as the spool names them, its prefix and a random UUID, and owned by this process's user. And
 * only those untouched for an hour, because another instance on the same machine may share the
 * directory: a live put writes its file as the upload arrives and reads it back as soon as a pooled
 * connection is free, so a file an hour old is no live put's. (Were a put to wait that long for a
 * connection, its file gone, it would fail and keep nothing, as any failed put does.)
 */
import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SPOOL_PREFIX } from './spool.js';

export const SPOOL_LEFTOVER_AGE_MS = 60 * 60 * 1000;

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const SPOOL_FILE = new RegExp(`^${SPOOL_PREFIX}${UUID}$`);

/** Removes the spool files in `dir` last modified more than `olderThanMs` ago; returns how many. */
export async function sweepSpool(dir: string, olderThanMs = SPOOL_LEFTOVER_AGE_MS): Promise<number> {
  const before = Date.now() - olderThanMs;
  const uid = process.getuid?.();
  let removed = 0;
  for (const name of await readdir(dir)) {
    if (!SPOOL_FILE.test(name)) continue;
    const path = join(dir, name);
    try {
      const stats = await lstat(path);
      if (!stats.isFile() || (uid !== undefined && stats.uid !== uid) || stats.mtimeMs >= before) continue;
      await rm(path);
      removed++;
    } catch (err) {
      // Another instance sweeping at the same moment got there first.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return removed;
}
