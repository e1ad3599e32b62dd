/**
 * Once per test run: drops the PostgreSQL schemas the run's files made (see freshSchemaUrl), after
 * every file has finished, and only this run's: another run on the machine keeps its own.
 */
import { dropRunSchemas, postgresAvailable } from './postgres.js';

export async function teardown(): Promise<void> {
  const run = process.env.TOLLGATE_TEST_RUN;
  if (run !== undefined && (await postgresAvailable().catch(() => false))) await dropRunSchemas(run);
}
