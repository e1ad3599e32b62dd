/** Chooses the storage backend from the configured URL: sqlite://path or postgres://... */
import { resolve } from 'node:path';
import { SqlStore } from './sql/sql-store.js';
import { openSqlite } from './sqlite/open-sqlite.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import { openPostgres } from './postgres/open-postgres.js';
import { PostgresStore } from './postgres/postgres-store.js';
import type { Store } from './types.js';
import type { Kysely } from 'kysely';
import type { Database } from './sql/database.js';

export function sqlitePathFromUrl(url: string): string {
  const path = url.slice('sqlite://'.length);
  return path === ':memory:' ? path : resolve(path);
}

export interface OpenStoreOptions {
  /** Told of what goes wrong or slowly in SQLite's background checkpoints, for the log. */
  onCheckpointProblem?: (message: string) => void;
  /** Told how long each restart of SQLite's write-ahead log held the store's commits, in ms. */
  onWritePause?: (ms: number) => void;
}

export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  let store: SqlStore;
  let migrationDb: Kysely<Database> | undefined;
  if (url.startsWith('sqlite://')) {
    const { onCheckpointProblem, onWritePause } = options;
    store = new SqliteStore(openSqlite(sqlitePathFromUrl(url), { onError: onCheckpointProblem, onPauseEnd: onWritePause }));
  } else {
    const opened = await openPostgres(url);
    store = new PostgresStore(opened.db, opened.fastDb, opened.schema);
    // The store's statements time out; the migrations may wait for another instance's, and take long.
    migrationDb = opened.migrationDb();
  }
  try {
    await store.migrate(migrationDb);
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  } finally {
    await migrationDb?.destroy();
  }
  return store;
}
