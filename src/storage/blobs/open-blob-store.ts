/** Builds the configured blob store: a local directory (one instance) or PostgreSQL large objects (several). */
import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import { LocalBlobStore } from './local-blob-store.js';
import { openBlobPool } from './postgres-blob-pool.js';
import { PostgresBlobStore } from './postgres-blob-store.js';
import type { BlobStore } from './types.js';

export async function openBlobStore(config: Config, logger: Logger): Promise<BlobStore> {
  if (config.blobs.backend === 'local') return new LocalBlobStore(config.blobs.directory);
  const store = new PostgresBlobStore(await openBlobPool(config.blobs.url ?? config.storage.url));
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    throw err;
  }
  // Housekeeping, not a condition of serving: a sweep that fails is reported and left for the next start.
  try {
    const removed = await store.sweepSpool();
    if (removed > 0) logger.info({ removed }, 'removed the temporary files of uploads a crash cut short');
  } catch (err) {
    logger.warn({ err }, 'could not sweep the temporary files of uploads a crash cut short');
  }
  return store;
}
