/** The embedded backend: one SQLite file in WAL mode, so readers never wait for the writer. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createRequire } from 'node:module';
import SQLite from 'better-sqlite3';
import { Checkpointer, type CheckpointerOptions } from './checkpointer.js';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../sql/database.js';

const MAX_CACHED_STATEMENTS = 1_000;

/**
 * Kysely prepares every statement anew, which costs more than running it; the same SQL text
 * (kysely's output for a given query shape) reuses one prepared statement instead. Measured on
 * the settlement commit: see bench/billing.bench.ts.
 */
function withStatementCache(sqlite: SQLite.Database): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = sqlite.prepare.bind(sqlite);
  return new Proxy(sqlite, {
    get(target, property, receiver) {
      if (property !== 'prepare') return Reflect.get(target, property, receiver) as unknown;
      return (source: string) => {
        let statement = cache.get(source);
        if (statement === undefined) {
          if (cache.size >= MAX_CACHED_STATEMENTS) cache.clear();
          statement = prepare(source);
          cache.set(source, statement);
        }
        return statement;
      };
    },
  });
}

export interface OpenedSqlite {
  db: Kysely<Database>;
  /** The connection itself, for the one write path that bypasses the query layer (sqlite-store.ts). */
  sqlite: SQLite.Database;
  /** Checkpoints the write-ahead log off the event loop; null for an in-memory database. */
  checkpointer: Checkpointer | null;
}

const require = createRequire(import.meta.url);

export function openSqlite(path: string, checkpoints: CheckpointerOptions = {}): OpenedSqlite {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SQLite(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  let checkpointer: Checkpointer | null = null;
  if (path !== ':memory:') {
    sqlite.pragma('wal_autocheckpoint = 0');
    checkpointer = new Checkpointer(path, require.resolve('better-sqlite3'), checkpoints);
  }
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) }), sqlite, checkpointer };
}
