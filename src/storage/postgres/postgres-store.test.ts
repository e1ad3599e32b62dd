import { afterAll } from 'vitest';
import { storeConformance } from '../store.conformance.js';
import { openStore } from '../open-store.js';
import { dropTestSchemas, freshSchemaUrl, postgresAvailable } from '../../../test/support/postgres.js';

const available = await postgresAvailable();
if (available) {
  storeConformance('PostgreSQL', async () => openStore(await freshSchemaUrl()));
  afterAll(() => dropTestSchemas());
} else {
  // Outside CI a machine without PostgreSQL still runs the rest of the suite.
  const { it } = await import('vitest');
  it.skip('PostgreSQL is not reachable: store conformance skipped (it never skips under CI=true)', () => undefined);
}
