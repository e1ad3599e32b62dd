import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../open-store.js';
import type { Settlement, Store, UsageRecord } from '../types.js';
import { chargeEntryId, chargeOnRecord, requestOfChargeEntry } from './usage-charges.js';
import { freshSchemaUrl, postgresAvailable } from '../../../test/support/postgres.js';

const REQUEST = `req_${'0193a1b2c3d4'}${'e5f6'.repeat(5)}`;

function usage(requestId: string, over: Partial<UsageRecord> = {}): UsageRecord {
  return {
    requestId,
    accountId: 'acct',
    apiKeyId: 'key1',
    model: 'm',
    provider: 'p',
    upstreamModel: 'u',
    modality: 'chat',
    promptTokens: 10,
    completionTokens: 5,
    costMicros: 300,
    status: 200,
    latencyMs: 3,
    startedAt: Date.UTC(2026, 0, 1),
    endedAt: Date.UTC(2026, 0, 1) + 3,
    ...over,
  };
}

function charged(requestId: string, amount = 300): Settlement {
  return { requestId, charge: { accountId: 'acct', kind: 'charge', amountMicros: -amount, requestId, apiKeyId: 'key1', note: null }, releaseReservation: false, usage: usage(requestId, { costMicros: amount }) };
}

describe('charges on usage records', () => {
  it('puts a plain charge of a gateway request on its record, anything else in a ledger row', () => {
    expect(chargeOnRecord(charged(REQUEST))).toBe(-300);
    const plain = charged(REQUEST);
    expect(chargeOnRecord({ ...plain, usage: null })).toBeNull();
    expect(chargeOnRecord({ ...plain, charge: { ...plain.charge!, kind: 'refund' } })).toBeNull();
    expect(chargeOnRecord({ ...plain, charge: { ...plain.charge!, note: 'video job' } })).toBeNull();
    expect(chargeOnRecord({ ...plain, charge: { ...plain.charge!, accountId: 'other' } })).toBeNull();
    expect(chargeOnRecord({ ...plain, charge: { ...plain.charge!, apiKeyId: null } })).toBeNull();
    expect(chargeOnRecord({ ...plain, requestId: 'req_other' })).toBeNull();
    // Only the gateway's own request ids: the ledger id is derived from them.
    expect(chargeOnRecord(charged('r1'))).toBeNull();
    expect(chargeOnRecord(charged(`${REQUEST}0`))).toBeNull();
  });

  it('derives a ledger id of the usual shape from the request id, and back', () => {
    const id = chargeEntryId(REQUEST);
    expect(id).toMatch(/^le_[0-9a-f]{32}$/);
    expect(requestOfChargeEntry(id)).toBe(REQUEST);
    expect(requestOfChargeEntry('le_123')).toBeUndefined();
    expect(requestOfChargeEntry(`lx_${REQUEST.slice(4)}`)).toBeUndefined();
  });
});

/**
 * An instance of an earlier version, during a rolling upgrade, deletes old usage records with
 * this statement (its retention's), whatever they carry.
 */
const EARLIER_DELETE = 'delete from usage_records where request_id in (select request_id from usage_records where account_id = $1 and started_at < $2 limit $3)';

async function commitOneOfEach(store: Store): Promise<void> {
  await store.createAccountIfAbsent({ id: 'acct', name: null, tier: 't', balanceMicros: 10_000 });
  const free = usage(`req_${'0193a1b2c3d5'}${'e5f6'.repeat(5)}`, { costMicros: 0, status: 502 });
  await store.commitSettlements([charged(REQUEST), { requestId: free.requestId, charge: null, releaseReservation: false, usage: free }]);
}

async function expectChargeKept(store: Store): Promise<void> {
  expect(await store.ledgerSum('acct')).toBe(9_700);
  expect((await store.getAccount('acct'))?.balanceMicros).toBe(9_700);
  expect(await store.findLedgerEntry(REQUEST, 'charge')).toMatchObject({ amountMicros: -300 });
}

const withPostgres = await postgresAvailable();

describe('a delete of old usage records by an earlier version', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-usage-charges-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('leaves the records that carry charges, on SQLite', async () => {
    const path = join(dir, 'store.db');
    const store = await openStore(`sqlite://${path}`);
    const earlier = new SQLite(path);
    try {
      await commitOneOfEach(store);
      expect(earlier.prepare(EARLIER_DELETE.replace(/\$\d/g, '?')).run('acct', Date.UTC(2027, 0, 1), 100).changes).toBe(1);
      expect(earlier.prepare('select count(*) from usage_records').pluck().get()).toBe(1);
      await expectChargeKept(store);
    } finally {
      earlier.close();
      await store.close();
    }
  });

  it.runIf(withPostgres)('leaves the records that carry charges, on PostgreSQL', async () => {
    const url = await freshSchemaUrl();
    const store = await openStore(url);
    const parsed = new URL(url);
    const schema = parsed.searchParams.get('schema');
    parsed.searchParams.delete('schema');
    const earlier = new pg.Client({ connectionString: parsed.toString(), options: `-c search_path=${schema}` });
    await earlier.connect();
    try {
      await commitOneOfEach(store);
      expect((await earlier.query(EARLIER_DELETE, ['acct', Date.UTC(2027, 0, 1), 100])).rowCount).toBe(1);
      expect(Number((await earlier.query<{ n: string }>('select count(*) as n from usage_records')).rows[0]?.n)).toBe(1);
      await expectChargeKept(store);
    } finally {
      await earlier.end();
      await store.close();
    }
  });
});
