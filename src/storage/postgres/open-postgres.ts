/** The shared backend for several instances: PostgreSQL through a pg connection pool. */
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../sql/database.js';

// int8 columns (money, timestamps in ms) come back as strings by default; every value we store
// fits in a double exactly, so read them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

export function openPostgres(url: string): Kysely<Database> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle client that loses its connection must not crash the process.
  pool.on('error', () => undefined);
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
