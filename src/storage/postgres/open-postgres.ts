/**
 * The shared backend for several instances: PostgreSQL through a pg connection pool. The URL may
 * name a schema (`postgres://host/db?schema=tollgate`) so that Tollgate's tables live apart from
 * others in a shared database; it is created if missing.
 */
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Database } from '../sql/database.js';
import { createIfMissing } from './concurrent-ddl.js';
import { poolOptions } from './pool-options.js';
import { quietPool } from './quiet-pool.js';

/** The longest a statement may run: settlement batches and admin reports take far less. */
const STATEMENT_TIMEOUT_MS = 30_000;
const RESERVATION_TIMEOUT_MS = 5_000;

// int8 columns (money, timestamps in ms) come back as strings by default; every value we store
// fits in a double exactly, so read them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

export interface OpenedPostgres {
  db: Kysely<Database>;
  /**
   * A second, small pool whose sessions do not wait for the disk at commit
   * (`synchronous_commit = off`): only for credit reservations, which a crash may lose harmlessly.
   */
  fastDb: Kysely<Database>;
  schema: string | undefined;
  /** Opens a small pool without statement timeouts, for the migrations at start (close it after). */
  migrationDb: () => Kysely<Database>;
}

export async function openPostgres(url: string): Promise<OpenedPostgres> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? undefined;
  parsed.searchParams.delete('schema');
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(`storage.url: schema "${schema}" must be a lower-case SQL identifier`);
  }
  const searchPath = schema ? `-c search_path=${schema}` : '';
  const pool = quietPool(poolOptions(parsed.toString(), 10, STATEMENT_TIMEOUT_MS, searchPath));
  // A request waits on its credit reservation, so that one gives up sooner (503 store_unavailable).
  const fastPool = quietPool(poolOptions(parsed.toString(), 10, RESERVATION_TIMEOUT_MS, `${searchPath} -c synchronous_commit=off`.trim()));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const fastDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool: fastPool }) });
  if (schema !== undefined) {
    try {
      await createIfMissing(() => sql`create schema if not exists ${sql.id(schema)}`.execute(db));
    } catch (err) {
      await db.destroy();
      await fastDb.destroy();
      throw err;
    }
  }
  const migrationDb = (): Kysely<Database> => new Kysely<Database>({ dialect: new PostgresDialect({ pool: quietPool(poolOptions(parsed.toString(), 2, null, searchPath)) }) });
  return { db, fastDb, schema, migrationDb };
}
