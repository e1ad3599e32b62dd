/** Chooses the storage backend from the configured URL: sqlite://path or postgres://... */
import { resolve } from 'node:path';
import { SqlStore } from './sql/sql-store.js';
import { openSqlite } from './sqlite/open-sqlite.js';
import { openPostgres } from './postgres/open-postgres.js';
import type { Store } from './types.js';

export function sqlitePathFromUrl(url: string): string {
  const path = url.slice('sqlite://'.length);
  return path === ':memory:' ? path : resolve(path);
}

export async function openStore(url: string): Promise<Store> {
  let store: SqlStore;
  if (url.startsWith('sqlite://')) {
    store = new SqlStore(openSqlite(sqlitePathFromUrl(url)));
  } else {
    const { db, schema } = await openPostgres(url);
    store = new SqlStore(db, schema);
  }
  try {
    await store.migrate();
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  }
  return store;
}
