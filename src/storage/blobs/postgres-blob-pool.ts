/**
 * A pg.Pool for PostgresBlobStore from a storage URL, honouring `?schema=NAME` exactly as
 * src/storage/postgres/open-postgres.ts does: the parameter is not PostgreSQL's, so it is removed
 * from the URL and becomes the connections' search_path, and the schema is created if missing.
 */
import pg from 'pg';
import { createIfMissing } from '../postgres/concurrent-ddl.js';
import { poolOptions } from '../postgres/pool-options.js';
import { quietPool } from '../postgres/quiet-pool.js';

export async function openBlobPool(url: string, max = 10): Promise<pg.Pool> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? undefined;
  parsed.searchParams.delete('schema');
  // It is spliced into a command-line option and a statement, so only a plain identifier will do.
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(`blob storage url: schema "${schema}" must be a lower-case SQL identifier`);
  }
  // Blobs are written and read a chunk per statement, so the usual statement timeout holds; but a
  // connection is held for a whole upload, so a full pool is waited on.
  const pool = quietPool(poolOptions(parsed.toString(), max, 30_000, schema ? `-c search_path=${schema}` : undefined, true));
  if (schema !== undefined) {
    try {
      await createIfMissing(() => pool.query(`create schema if not exists ${schema}`));
    } catch (err) {
      await pool.end();
      throw err;
    }
  }
  return pool;
}
