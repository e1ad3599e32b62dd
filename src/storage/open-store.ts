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
  const store = url.startsWith('sqlite://') ? new SqlStore(openSqlite(sqlitePathFromUrl(url))) : new SqlStore(openPostgres(url));
  try {
    await store.migrate();
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  }
  return store;
}
