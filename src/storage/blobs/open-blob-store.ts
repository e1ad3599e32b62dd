/** Builds the configured blob store: a local directory (one instance) or PostgreSQL large objects (several). */
import type { Config } from '../../config/schema.js';
import { LocalBlobStore } from './local-blob-store.js';
import { openBlobPool } from './postgres-blob-pool.js';
import { PostgresBlobStore } from './postgres-blob-store.js';
import type { BlobStore } from './types.js';

export async function openBlobStore(config: Config): Promise<BlobStore> {
  if (config.blobs.backend === 'local') return new LocalBlobStore(config.blobs.directory);
  const store = new PostgresBlobStore(await openBlobPool(config.blobs.url ?? config.storage.url));
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}
