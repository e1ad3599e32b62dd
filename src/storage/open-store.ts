/** Chooses the storage backend from the configured URL: sqlite://path or postgres://... */
import { resolve } from 'node:path';
import { SqlStore } from './sql/sql-store.js';
import { openSqlite } from './sqlite/open-sqlite.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import { openPostgres } from './postgres/open-postgres.js';
import { PostgresStore } from './postgres/postgres-store.js';
import type { Store } from './types.js';

export function sqlitePathFromUrl(url: string): string {
  const path = url.slice('sqlite://'.length);
  return path === ':memory:' ? path : resolve(path);
}

export async function openStore(url: string): Promise<Store> {
  let store: SqlStore;
  if (url.startsWith('sqlite://')) {
    const { db, sqlite, checkpointer } = openSqlite(sqlitePathFromUrl(url));
    store = new SqliteStore(db, sqlite, checkpointer);
  } else {
    const { db, fastDb, schema } = await openPostgres(url);
    store = new PostgresStore(db, fastDb, schema);
  }
  try {
    await store.migrate();
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  }
  return store;
}
