/**
 * PostgreSQL for tests: the machine's real server (127.0.0.1:5432, database `test`), each store in
 * a schema of its own so tests never see each other's rows. Under CI=true an unreachable server
 * fails the run instead of skipping the tests.
 */
import pg from 'pg';

export const POSTGRES_URL = process.env.TOLLGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch (err) {
    if (process.env.CI === 'true') throw new Error(`PostgreSQL is required under CI=true but is not reachable at ${POSTGRES_URL}: ${String(err)}`);
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Schemas are named after the test run (set in vitest.config.ts) and dropped together when the run
 * ends (test/support/global-setup.ts), never while it runs: kysely's migrator lists every table
 * of the database, and a schema dropped under that listing by another test file fails the
 * listing (3F000, "schema … does not exist"), which made migrations fail at random.
 */
export const TEST_RUN = process.env.TOLLGATE_TEST_RUN ?? 'adhoc';
const SCHEMA_PREFIX = `tollgate_test_${TEST_RUN}_`;

/** Creates an empty schema and returns a URL whose connections use it. */
export async function freshSchemaUrl(): Promise<string> {
  const schema = `${SCHEMA_PREFIX}${Math.random().toString(36).slice(2, 10)}`;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`create schema ${schema}`);
  } finally {
    await client.end();
  }
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('schema', schema);
  return url.toString();
}

/** Drops every schema of the run (its last step). */
export async function dropRunSchemas(run = TEST_RUN): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ name: string }>('select nspname as name from pg_namespace where starts_with(nspname, $1)', [`tollgate_test_${run}_`]);
    for (const { name } of rows) await client.query(`drop schema if exists ${name} cascade`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
