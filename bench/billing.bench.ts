/**
 * Micro-benchmark of accounting (issue 5): what holding a request's worst-case cost and
 * committing its charge and usage record cost, per request, on SQLite (holds in memory, file in
 * WAL mode) and on PostgreSQL (holds in the store). Batches of 64 concurrent requests show what
 * group commit does. Run with `npm run bench:billing` (PostgreSQL at 127.0.0.1:5432 for its cases).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { Billing, type BilledRequest } from '../src/billing/billing.js';
import { MemoryCreditGate } from '../src/billing/memory-credits.js';
import { StoreCreditGate } from '../src/billing/store-credits.js';
import { SettlementWriter } from '../src/billing/settlement-writer.js';
import { openStore } from '../src/storage/open-store.js';
import { newRequestId } from '../src/http/request-id.js';
import { createLogger } from '../src/logging/logger.js';
import type { Store } from '../src/storage/types.js';
import { freshSchemaUrl } from '../test/support/postgres.js';

const logger = createLogger('warn');
const PRICE = { input_per_million_tokens: 0.15, output_per_million_tokens: 0.6 };
const dir = mkdtempSync(join(tmpdir(), 'tollgate-billing-bench-'));
let sqlite: Store;
let postgres: Store;
let onSqlite: Billing;
let onPostgres: Billing;

beforeAll(async () => {
  sqlite = await openStore(`sqlite://${join(dir, 'bench.db')}`);
  postgres = await openStore(await freshSchemaUrl());
  for (const store of [sqlite, postgres]) await store.createAccountIfAbsent({ id: 'acct', name: null, tier: 't', balanceMicros: 1e15 });
  onSqlite = new Billing(new MemoryCreditGate(sqlite), new SettlementWriter(sqlite, logger));
  onPostgres = new Billing(new StoreCreditGate(postgres, 660_000, logger), new SettlementWriter(postgres, logger));
});

afterAll(async () => {
  await sqlite.close();
  await postgres.close();
  rmSync(dir, { recursive: true, force: true });
});

function request(): BilledRequest {
  // Real request ids, time first: rows keyed by them are appended to their indexes, not scattered.
  return { requestId: newRequestId(), accountId: 'acct', apiKeyId: 'key', model: 'bench-model', modality: 'chat', price: PRICE, startedAt: Date.now() };
}

async function one(billing: Billing): Promise<void> {
  const billed = request();
  const hold = await billing.hold(billed, 300, 256);
  await billing.settle(billed, hold, { promptTokens: 120, completionTokens: 80, charged: true, status: 200, provider: 'p', upstreamModel: 'u' });
}

async function batch(billing: Billing): Promise<void> {
  await Promise.all(Array.from({ length: 64 }, () => one(billing)));
}

describe('hold + charge + usage record, committed', () => {
  bench('sqlite, one request at a time', () => one(onSqlite));
  bench('sqlite, 64 concurrent (per batch of 64)', () => batch(onSqlite));
  bench('postgres, one request at a time', () => one(onPostgres));
  bench('postgres, 64 concurrent (per batch of 64)', () => batch(onPostgres));
});
