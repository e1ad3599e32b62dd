/** The embedded backend: one SQLite file in WAL mode, so readers never wait for the writer. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createRequire } from 'node:module';
import SQLite from 'better-sqlite3';
import { Checkpointer, type CheckpointerOptions } from './checkpointer.js';
import { Kysely, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type SqliteDialectConfig } from 'kysely';
import type { Database } from '../sql/database.js';
import { ConnectionGate } from './connection-gate.js';
import { lockDatabase } from './instance-lock.js';

const MAX_CACHED_STATEMENTS = 1_000;

/**
 * Every commit writes each page it touched to the write-ahead log, whole, and the checkpointer
 * copies it again, while a charge changes about 150 bytes spread over five pages (the ledger
 * row, its three indexes, the balance). With 2 KB pages instead of SQLite's 4 KB, a commit of
 * one request (a stream's end, any request on a quiet gateway) costs a sixth less and batches
 * the same (`npm run bench:billing`); 1 KB pages made batches of 64 slower (1,360 against
 * 1,695 a second, one run).
 */
const PAGE_SIZE = 2_048;

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

/**
 * Kysely's SQLite dialect, whose statements wait for the connection gate (connection-gate.ts) before
 * they take the connection. A transaction takes it once, so it waits before its `begin`, never
 * between two of its statements: it then runs whole within one turn of the event loop, as every
 * transaction of the store does (sqlite-store.ts), and no pause can start in its middle.
 */
class GatedSqliteDialect extends SqliteDialect {
  constructor(
    private readonly settings: SqliteDialectConfig,
    private readonly gate: ConnectionGate,
  ) {
    super(settings);
  }

  override createDriver(): Driver {
    return new GatedSqliteDriver(this.settings, this.gate);
  }
}

class GatedSqliteDriver extends SqliteDriver {
  constructor(
    settings: SqliteDialectConfig,
    private readonly gate: ConnectionGate,
  ) {
    super(settings);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const opened = this.gate.whenOpen();
    if (opened !== undefined) await opened;
    return super.acquireConnection();
  }
}

export interface OpenedSqlite {
  db: Kysely<Database>;
  /** The connection itself, for the one write path that bypasses the query layer (sqlite-store.ts). */
  sqlite: SQLite.Database;
  /** Checkpoints the write-ahead log off the event loop; null for an in-memory database. */
  checkpointer: Checkpointer | null;
  /** Closed by the store while the checkpointer starts the log over; the query layer waits for it. */
  gate: ConnectionGate;
  /** This process's hold on the database file (see instance-lock.ts); null for an in-memory database. */
  lock: SQLite.Database | null;
}

const require = createRequire(import.meta.url);

export function openSqlite(path: string, checkpoints: CheckpointerOptions = {}): OpenedSqlite {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const lock = path === ':memory:' ? null : lockDatabase(path);
  try {
    const sqlite = new SQLite(path);
    // Only a new, empty file takes it; an existing database keeps the page size it was made with.
    sqlite.pragma(`page_size = ${PAGE_SIZE}`);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    let checkpointer: Checkpointer | null = null;
    if (path !== ':memory:') {
      sqlite.pragma('wal_autocheckpoint = 0');
      checkpointer = new Checkpointer(path, require.resolve('better-sqlite3'), checkpoints);
    }
    const gate = new ConnectionGate();
    return { db: new Kysely<Database>({ dialect: new GatedSqliteDialect({ database: withStatementCache(sqlite) }, gate) }), sqlite, checkpointer, gate, lock };
  } catch (err) {
    lock?.close();
    throw err;
  }
}
