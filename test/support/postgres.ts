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
 * The schemas this test file made. Only these are dropped: a worker process may run several test
 * files, at once or in turn, so a pattern such as the process id would reach other files' schemas.
 */
const created = new Set<string>();

/** Creates an empty schema and returns a URL whose connections use it. */
export async function freshSchemaUrl(): Promise<string> {
  const schema = `tollgate_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  created.add(schema);
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

export async function dropTestSchemas(): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    for (const schema of [...created]) {
      await client.query(`drop schema if exists ${schema} cascade`);
      created.delete(schema);
    }
  } finally {
    await client.end();
  }
}
