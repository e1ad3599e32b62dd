/**
 * The behaviour every Store backend must have. Each backend's test file runs this suite against a
 * fresh, empty store of its own.
 */
import { describe, expect, it, beforeEach, afterEach } from 'vitest';
import { orderedHexAt } from '../util/ordered-id.js';
import type { FileRecord, VideoJobRecord, IdempotencyRecord, Settlement, Store, UsageRecord } from './types.js';
import { BINDING_STATUS, BalanceOutOfRangeError, MAX_BALANCE_MICROS } from './types.js';

/** An account's ledger ids read a page of `size` at a time, each page after the last entry of the one before. */
async function idsPageByPage(store: Store, accountId: string, size: number): Promise<string[]> {
  const read: string[] = [];
  let page = await store.listLedger(accountId, size);
  while (page.length > 0) {
    read.push(...page.map((e) => e.id));
    page = await store.listLedger(accountId, size, page.at(-1));
  }
  return read;
}

export function storeConformance(name: string, open: () => Promise<Store>): void {
  describe(`Store conformance: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    it('migrates idempotently', async () => {
      await store.migrate();
      await store.migrate();
    });

    it('answers a ping, and a closed store fails it', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
      const closed = await open();
      await closed.close();
      await expect(closed.ping()).rejects.toThrow();
    });

    it('creates an account once and keeps the first balance', async () => {
      expect(await store.createAccountIfAbsent({ id: 'a1', name: 'One', tier: 'free', balanceMicros: 5_000_000 })).toBe(true);
      expect(await store.createAccountIfAbsent({ id: 'a1', name: 'Again', tier: 'pro', balanceMicros: 1 })).toBe(false);
      const account = await store.getAccount('a1');
      expect(account).toMatchObject({ id: 'a1', name: 'One', tier: 'free', balanceMicros: 5_000_000 });
      expect(typeof account?.createdAt).toBe('number');
      expect(await store.getAccount('missing')).toBeUndefined();
    });

    it('records an opening balance as a top-up of the creating request, with the account', async () => {
      expect(await store.createAccountIfAbsent({ id: 'a0', name: null, tier: 'free', balanceMicros: 7_000_000, openingRequestId: 'req_opening' })).toBe(true);
      expect(await store.createAccountIfAbsent({ id: 'a0', name: null, tier: 'free', balanceMicros: 7_000_000, openingRequestId: 'req_again' })).toBe(false);
      expect((await store.listLedger('a0', 10)).map((e) => [e.kind, e.amountMicros, e.requestId, e.note])).toEqual([['topup', 7_000_000, 'req_opening', 'opening credit']]);
      expect((await store.getAccount('a0'))?.balanceMicros).toBe(7_000_000);
      expect(await store.findLedgerEntry('req_opening', 'topup')).toMatchObject({ accountId: 'a0', kind: 'topup', amountMicros: 7_000_000 });
      expect(await store.findLedgerEntry('req_opening', 'charge')).toBeUndefined();
    });

    it('updates an account name and tier', async () => {
      await store.createAccountIfAbsent({ id: 'a2', name: null, tier: 'free', balanceMicros: 0 });
      await store.updateAccount('a2', { tier: 'pro' });
      expect((await store.getAccount('a2'))?.tier).toBe('pro');
      await store.updateAccount('a2', { name: 'Named' });
      expect(await store.getAccount('a2')).toMatchObject({ name: 'Named', tier: 'pro' });
    });

    it('stores keys with their scope and replaces them by id', async () => {
      await store.createAccountIfAbsent({ id: 'a3', name: null, tier: 'free', balanceMicros: 0 });
      await store.putApiKey({ id: 'k1', accountId: 'a3', name: 'first', secretHash: 'ab'.repeat(32), status: 'active', scope: { models: ['gpt-*'], sdks: ['curl'] } });
      await store.putApiKey({ id: 'k2', accountId: 'a3', name: null, secretHash: 'cd'.repeat(32), status: 'active', scope: null });
      expect(await store.getApiKey('k1')).toMatchObject({ id: 'k1', accountId: 'a3', name: 'first', status: 'active', scope: { models: ['gpt-*'], sdks: ['curl'] } });
      await store.putApiKey({ id: 'k1', accountId: 'a3', name: 'renamed', secretHash: 'ab'.repeat(32), status: 'disabled', scope: null });
      expect(await store.getApiKey('k1')).toMatchObject({ name: 'renamed', status: 'disabled', scope: null });
      expect((await store.listApiKeys('a3')).map((k) => k.id).sort()).toEqual(['k1', 'k2']);
      expect(await store.getApiKey('nope')).toBeUndefined();
      // An update changes only what it names, and never makes a key that is not there.
      expect(await store.updateApiKey('k2', { status: 'disabled' })).toMatchObject({ id: 'k2', name: null, status: 'disabled', scope: null });
      expect(await store.updateApiKey('k2', { name: 'second', scope: { models: ['a'] } })).toMatchObject({ name: 'second', status: 'disabled', scope: { models: ['a'] } });
      expect(await store.updateApiKey('k2', { scope: null })).toMatchObject({ name: 'second', status: 'disabled', scope: null });
      expect(await store.updateApiKey('nope', { name: 'ghost' })).toBeUndefined();
      expect(await store.getApiKey('nope')).toBeUndefined();
    });

    it('refuses a key for an account that does not exist', async () => {
      await expect(store.putApiKey({ id: 'k9', accountId: 'ghost', name: null, secretHash: 'ef'.repeat(32), status: 'active', scope: null })).rejects.toThrow();
    });

    const usageOf = (requestId: string, over: Partial<UsageRecord> = {}): UsageRecord => ({
      requestId,
      accountId: 'm1',
      apiKeyId: 'key1',
      model: 'gpt-x',
      provider: 'p',
      upstreamModel: 'gpt-x-2026',
      modality: 'chat',
      promptTokens: 10,
      completionTokens: 5,
      costMicros: 300,
      status: 200,
      latencyMs: 12,
      startedAt: Date.UTC(2026, 10, 22, 10),
      endedAt: Date.UTC(2026, 10, 22, 10) + 12,
      ...over,
    });

    it('records the opening credit as a top-up, so the balance is the ledger sum', async () => {
      await store.createAccountIfAbsent({ id: 'm1', name: null, tier: 'free', balanceMicros: 2_000_000 });
      expect(await store.ledgerSum('m1')).toBe(2_000_000);
      const entries = await store.listLedger('m1', 10);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ kind: 'topup', amountMicros: 2_000_000 });
    });

    it('moves the balance with each ledger entry, atomically', async () => {
      await store.createAccountIfAbsent({ id: 'm1', name: null, tier: 'free', balanceMicros: 0 });
      const after = await store.addLedgerEntry({ accountId: 'm1', kind: 'topup', amountMicros: 5_000, requestId: 'req_top', apiKeyId: null, note: 'by admin' });
      expect(after.balanceMicros).toBe(5_000);
      await store.addLedgerEntry({ accountId: 'm1', kind: 'adjustment', amountMicros: -1_000, requestId: null, apiKeyId: null, note: null });
      expect((await store.getAccount('m1'))?.balanceMicros).toBe(4_000);
      expect(await store.ledgerSum('m1')).toBe(4_000);
      await expect(store.addLedgerEntry({ accountId: 'ghost', kind: 'topup', amountMicros: 1, requestId: null, apiKeyId: null, note: null })).rejects.toThrow();
      // Newest first, also among entries of one millisecond.
      for (let i = 0; i < 5; i++) await store.addLedgerEntry({ accountId: 'm1', kind: 'adjustment', amountMicros: 1, requestId: null, apiKeyId: null, note: `quick ${i}` });
      expect((await store.listLedger('m1', 5)).map((e) => e.note)).toEqual(['quick 4', 'quick 3', 'quick 2', 'quick 1', 'quick 0']);
      // Past the bound nothing is written: neither the entry nor the balance.
      const before = await store.getAccount('m1');
      await expect(store.addLedgerEntry({ accountId: 'm1', kind: 'topup', amountMicros: MAX_BALANCE_MICROS, requestId: null, apiKeyId: null, note: 'too much' })).rejects.toBeInstanceOf(BalanceOutOfRangeError);
      expect(await store.getAccount('m1')).toEqual(before);
      expect((await store.listLedger('m1', 100)).some((e) => e.note === 'too much')).toBe(false);
    });

    it('pages a ledger after a cursor entry, through entries that share their time, as new ones arrive', async () => {
      await store.createAccountIfAbsent({ id: 'p1', name: null, tier: 'free', balanceMicros: 100 });
      await store.createAccountIfAbsent({ id: 'p2', name: null, tier: 'free', balanceMicros: 100 });
      const charge = (accountId: string, requestId: string): Settlement => ({
        requestId,
        charge: { accountId, kind: 'charge', amountMicros: -1, requestId, apiKeyId: 'key1', note: null },
        releaseReservation: false,
        usage: null,
      });
      // One batch: its charges are written with one time, so only their ids order them.
      await store.commitSettlements(Array.from({ length: 7 }, (_, i) => charge(i % 3 === 0 ? 'p2' : 'p1', `pg${i}`)));
      await store.commitSettlements(Array.from({ length: 5 }, (_, i) => charge('p1', `ph${i}`)));
      for (let i = 0; i < 3; i++) await store.addLedgerEntry({ accountId: 'p1', kind: 'adjustment', amountMicros: 1, requestId: null, apiKeyId: null, note: `a${i}` });
      const whole = await store.listLedger('p1', 100);
      expect(whole).toHaveLength(1 + 4 + 5 + 3);
      expect(new Set(whole.filter((e) => e.requestId?.startsWith('ph')).map((e) => e.createdAt)).size).toBe(1);

      for (const size of [1, 2, 3, 4]) expect(await idsPageByPage(store, 'p1', size), `pages of ${size}`).toEqual(whole.map((e) => e.id));

      // Entries written between two pages are newer than the cursor: the next page stays as it was.
      const first = await store.listLedger('p1', 6);
      await store.commitSettlements([charge('p1', 'late1'), charge('p1', 'late2')]);
      await store.addLedgerEntry({ accountId: 'p1', kind: 'topup', amountMicros: 5, requestId: null, apiKeyId: null, note: 'late' });
      expect(await store.listLedger('p1', 100, first.at(-1))).toEqual(whole.slice(6));
      expect(await store.listLedger('p1', 100, whole.at(-1))).toEqual([]);

      expect(await store.getLedgerEntry(whole[3]!.id)).toEqual(whole[3]);
      expect(await store.getLedgerEntry(`le_${'0'.repeat(32)}`)).toBeUndefined();
    });

    it('commits settlements in one batch and charges each request once', async () => {
      await store.createAccountIfAbsent({ id: 'm1', name: null, tier: 'free', balanceMicros: 10_000 });
      const charge = (requestId: string, amount: number) => ({ accountId: 'm1', kind: 'charge' as const, amountMicros: -amount, requestId, apiKeyId: 'key1', note: null });
      await store.commitSettlements([
        { requestId: 'r1', charge: charge('r1', 300), releaseReservation: false, usage: usageOf('r1') },
        { requestId: 'r2', charge: charge('r2', 200), releaseReservation: false, usage: usageOf('r2', { costMicros: 200 }) },
        { requestId: 'r3', charge: null, releaseReservation: false, usage: usageOf('r3', { costMicros: 0, status: 502 }) },
      ]);
      await store.commitSettlements([{ requestId: 'r1', charge: charge('r1', 300), releaseReservation: false, usage: usageOf('r1') }]);
      expect((await store.getAccount('m1'))?.balanceMicros).toBe(9_500);
      expect(await store.ledgerSum('m1')).toBe(9_500);
      const rows = await store.usageSummary({ accountId: 'm1' });
      expect(rows).toEqual([{ day: '2026-11-22', accountId: 'm1', apiKeyId: 'key1', model: 'gpt-x', requests: 3, promptTokens: 30, completionTokens: 15, costMicros: 500 }]);
      expect(await store.usageSummary({ accountId: 'm1', model: 'other' })).toEqual([]);
    });

    it('moves each account of a batch by its own charges, a charge sent twice in one batch once', async () => {
      await store.createAccountIfAbsent({ id: 'b1', name: null, tier: 'free', balanceMicros: 10_000 });
      await store.createAccountIfAbsent({ id: 'b2', name: null, tier: 'free', balanceMicros: 5_000 });
      const charge = (accountId: string, requestId: string, amount: number) => ({ accountId, kind: 'charge' as const, amountMicros: -amount, requestId, apiKeyId: 'key1', note: null });
      await store.commitSettlements([
        { requestId: 'x1', charge: charge('b1', 'x1', 100), releaseReservation: false, usage: null },
        { requestId: 'x2', charge: charge('b2', 'x2', 40), releaseReservation: false, usage: null },
        { requestId: 'x3', charge: charge('b1', 'x3', 7), releaseReservation: false, usage: null },
        { requestId: 'x1', charge: charge('b1', 'x1', 100), releaseReservation: false, usage: null },
      ]);
      expect((await store.getAccount('b1'))?.balanceMicros).toBe(9_893);
      expect((await store.getAccount('b2'))?.balanceMicros).toBe(4_960);
      expect(await store.ledgerSum('b1')).toBe(9_893);
      expect(await store.ledgerSum('b2')).toBe(4_960);
    });

    it('deletes an account\'s usage records started before a time, a batch at a time, and nothing else', async () => {
      await store.createAccountIfAbsent({ id: 'm1', name: null, tier: 'free', balanceMicros: 10_000 });
      await store.createAccountIfAbsent({ id: 'm2', name: null, tier: 'free', balanceMicros: 10_000 });
      const day = 86_400_000;
      const at = (n: number) => Date.UTC(2026, 10, 1) + n * day;
      const old = ['o1', 'o2', 'o3'].map((id, i) => usageOf(id, { startedAt: at(i), endedAt: at(i) + 5 }));
      const recent = usageOf('n1', { startedAt: at(10), endedAt: at(10) + 5 });
      const other = usageOf('x1', { accountId: 'm2', startedAt: at(0), endedAt: at(0) + 5 });
      const charge = { accountId: 'm1', kind: 'charge' as const, amountMicros: -300, requestId: 'o1', apiKeyId: 'key1', note: null };
      await store.commitSettlements([...old, recent, other].map((usage) => ({ requestId: usage.requestId, charge: usage.requestId === 'o1' ? charge : null, releaseReservation: false, usage })));
      expect(await store.deleteUsageRecordsBefore('m1', at(5), 2)).toBe(2);
      expect(await store.deleteUsageRecordsBefore('m1', at(5), 2)).toBe(1);
      expect(await store.deleteUsageRecordsBefore('m1', at(5), 2)).toBe(0);
      expect((await store.usageSummary({ accountId: 'm1' })).map((row) => row.day)).toEqual(['2026-11-11']);
      expect(await store.usageSummary({ accountId: 'm2' })).toHaveLength(1);
      // The ledger is the account's history: its charge stays, and the balance is still its sum.
      expect(await store.ledgerSum('m1')).toBe(9_700);
      expect((await store.getAccount('m1'))?.balanceMicros).toBe(9_700);
    });

    describe('charges carried by usage records', () => {
      // Gateway request ids (req_ and 32 hex digits, time first), as the charges that records carry have.
      const gatewayId = (n: number) => `req_${(Date.UTC(2026, 10, 22, 10) + n).toString(16).padStart(12, '0')}${'ab'.repeat(10)}`;
      const charged = (n: number, amount: number, over: Partial<UsageRecord> = {}): Settlement => {
        const usage = usageOf(gatewayId(n), { costMicros: amount, startedAt: Date.UTC(2026, 10, 22, 10) + n, ...over });
        return { requestId: usage.requestId, charge: { accountId: usage.accountId, kind: 'charge', amountMicros: -amount, requestId: usage.requestId, apiKeyId: usage.apiKeyId, note: null }, releaseReservation: false, usage };
      };

      it('shows a request\'s charge as a ledger entry under an id of the request, and charges it once', async () => {
        await store.createAccountIfAbsent({ id: 'm1', name: null, tier: 'free', balanceMicros: 10_000 });
        await store.commitSettlements([charged(1, 300), charged(2, 200), charged(1, 300)]);
        await store.commitSettlements([charged(2, 200)]);
        expect((await store.getAccount('m1'))?.balanceMicros).toBe(9_500);
        expect(await store.ledgerSum('m1')).toBe(9_500);
        const entry = await store.findLedgerEntry(gatewayId(1), 'charge');
        expect(entry).toEqual({
          id: `le_${gatewayId(1).slice(4)}`,
          accountId: 'm1',
          kind: 'charge',
          amountMicros: -300,
          requestId: gatewayId(1),
          apiKeyId: 'key1',
          note: null,
          createdAt: Date.UTC(2026, 10, 22, 10) + 1,
        });
        expect(await store.getLedgerEntry(entry!.id)).toEqual(entry);
        expect(await store.findLedgerEntry(gatewayId(1), 'refund')).toBeUndefined();
        expect(await store.getLedgerEntry(`le_${gatewayId(3).slice(4)}`)).toBeUndefined();
        // The opening credit was written now, after the requests' starts: it is the newest entry.
        expect((await store.listLedger('m1', 10)).map((e) => [e.kind, e.amountMicros])).toEqual([['topup', 10_000], ['charge', -200], ['charge', -300]]);
        expect((await store.usageSummary({ accountId: 'm1' }))[0]).toMatchObject({ requests: 2, costMicros: 500 });
      });

      it('keeps a record that carries a charge when the usage records before a time are deleted', async () => {
        await store.createAccountIfAbsent({ id: 'm1', name: null, tier: 'free', balanceMicros: 10_000 });
        await store.commitSettlements([charged(1, 300), { requestId: gatewayId(2), charge: null, releaseReservation: false, usage: usageOf(gatewayId(2), { costMicros: 0, status: 502 }) }]);
        expect(await store.deleteUsageRecordsBefore('m1', Date.UTC(2026, 10, 23), 10)).toBe(1);
        expect(await store.deleteUsageRecordsBefore('m1', Date.UTC(2026, 10, 23), 10)).toBe(0);
        expect(await store.ledgerSum('m1')).toBe(9_700);
        expect(await store.findLedgerEntry(gatewayId(1), 'charge')).toMatchObject({ amountMicros: -300 });
        expect((await store.usageSummary({ accountId: 'm1' }))[0]).toMatchObject({ requests: 1, costMicros: 300 });
      });

      it('charges in a ledger row, once, a request whose record was written without its charge', async () => {
        await store.createAccountIfAbsent({ id: 'm1', name: null, tier: 'free', balanceMicros: 10_000 });
        const settlement = charged(1, 300);
        // As a store written before charges moved onto records holds it: the record, its charge apart.
        await store.commitSettlements([{ ...settlement, charge: null }]);
        await store.commitSettlements([settlement]);
        await store.commitSettlements([settlement]);
        expect((await store.getAccount('m1'))?.balanceMicros).toBe(9_700);
        expect(await store.ledgerSum('m1')).toBe(9_700);
        const entry = await store.findLedgerEntry(gatewayId(1), 'charge');
        expect(entry).toMatchObject({ kind: 'charge', amountMicros: -300, requestId: gatewayId(1) });
        expect(entry!.id).not.toBe(`le_${gatewayId(1).slice(4)}`);
        expect(await store.getLedgerEntry(entry!.id)).toEqual(entry);
      });

      it('keeps other charges, and a charge that does not match its record, in ledger rows', async () => {
        await store.createAccountIfAbsent({ id: 'm1', name: null, tier: 'free', balanceMicros: 10_000 });
        const noted = charged(1, 100);
        const otherKey = charged(2, 10);
        await store.commitSettlements([
          { ...noted, charge: { ...noted.charge!, note: 'video job' } },
          { ...otherKey, charge: { ...otherKey.charge!, apiKeyId: 'key2' } },
        ]);
        expect(await store.ledgerSum('m1')).toBe(9_890);
        const entries = await store.listLedger('m1', 10);
        expect(entries.map((e) => [e.amountMicros, e.apiKeyId, e.note])).toEqual([
          [-10, 'key2', null],
          [-100, 'key1', 'video job'],
          [10_000, null, 'opening credit'],
        ]);
        // Ledger rows have ids of their own, not the request's.
        expect(entries.some((e) => e.id === `le_${gatewayId(1).slice(4)}`)).toBe(false);
      });

      it('pages a ledger of charges on records and ledger rows alike, through entries that share their time', async () => {
        await store.createAccountIfAbsent({ id: 'p1', name: null, tier: 'free', balanceMicros: 100 });
        const at = Date.UTC(2026, 10, 22, 10) + 5;
        await store.commitSettlements(Array.from({ length: 6 }, (_, i) => charged(i, 1, { accountId: 'p1', startedAt: at })));
        await store.commitSettlements([charged(10, 1, { accountId: 'p1', startedAt: at - 1 }), charged(11, 1, { accountId: 'p2' })]);
        for (let i = 0; i < 3; i++) await store.addLedgerEntry({ accountId: 'p1', kind: 'adjustment', amountMicros: 1, requestId: null, apiKeyId: null, note: `a${i}` });
        const whole = await store.listLedger('p1', 100);
        expect(whole).toHaveLength(1 + 3 + 6 + 1);
        expect(whole.slice(4).map((e) => e.createdAt)).toEqual([at, at, at, at, at, at, at - 1]);
        expect(await store.ledgerSum('p1')).toBe(100 + 3 - 7);
        for (const size of [1, 2, 3, 4]) expect(await idsPageByPage(store, 'p1', size), `pages of ${size}`).toEqual(whole.map((e) => e.id));
        for (const entry of whole) expect(await store.getLedgerEntry(entry.id)).toEqual(entry);
      });
    });

    it('reserves credit only while the balance less what is held covers it, and releases it', async () => {
      await store.createAccountIfAbsent({ id: 'm1', name: null, tier: 'free', balanceMicros: 1_000 });
      const reserve = (requestId: string, amountMicros: number, expiresAt = Date.now() + 60_000) => store.reserveCredits({ requestId, accountId: 'm1', amountMicros, expiresAt });
      expect(await reserve('a', 600)).toEqual({ reserved: true, balanceMicros: 1_000, reservedMicros: 0 });
      expect(await reserve('b', 500)).toEqual({ reserved: false, balanceMicros: 1_000, reservedMicros: 600 });
      expect((await reserve('c', 400, 0)).reserved).toBe(true);
      await store.commitSettlements([{ requestId: 'a', charge: null, releaseReservation: true, usage: null }]);
      expect((await reserve('d', 500)).reserved).toBe(true);
      // c expired: a sweep gives its 400 back.
      expect(await store.releaseExpiredReservations(Date.now())).toBe(1);
      expect(await reserve('e', 500)).toEqual({ reserved: true, balanceMicros: 1_000, reservedMicros: 500 });
    });

    it('never over-reserves under concurrency', async () => {
      await store.createAccountIfAbsent({ id: 'm1', name: null, tier: 'free', balanceMicros: 1_000 });
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => store.reserveCredits({ requestId: `x${i}`, accountId: 'm1', amountMicros: 100, expiresAt: Date.now() + 60_000 })));
      expect(results.filter((r) => r.reserved)).toHaveLength(10);
    });

    it('commits an idempotency record with its charge and returns it, body and headers intact, until it expires', async () => {
      await store.createAccountIfAbsent({ id: 'm1', name: null, tier: 'free', balanceMicros: 1_000 });
      const now = Date.now();
      const text = recordOf('k-text', { body: Buffer.from('{"reply":"héllo ✓"}'), createdAt: now, expiresAt: now + 60_000 });
      const binary = recordOf('k-bin', { body: Buffer.from([0, 255, 1, 128, 10]), createdAt: now, expiresAt: now + 60_000 });
      await store.commitSettlements([
        { requestId: 'r1', charge: { accountId: 'm1', kind: 'charge', amountMicros: -100, requestId: 'r1', apiKeyId: 'key1', note: null }, releaseReservation: false, usage: null, idempotency: text },
        { requestId: 'r2', charge: null, releaseReservation: false, usage: null, idempotency: binary },
      ]);
      expect((await store.getAccount('m1'))?.balanceMicros).toBe(900);
      expect(await store.getIdempotencyRecord('k-text', now)).toEqual(text);
      expect(await store.getIdempotencyRecord('k-bin', now)).toEqual(binary);
      expect(await store.getIdempotencyRecord('k-text', now + 60_000)).toBeUndefined();
      expect(await store.getIdempotencyRecord('missing', now)).toBeUndefined();
    });

    it('keeps Responses API responses for their account until they expire, and sweeps them', async () => {
      const now = Date.now();
      const response = { id: 'resp_1', accountId: 'm1', output: '[{"type":"message","id":"msg_1"}]', response: '{"id":"resp_1"}', input: '[]', previousResponseId: null, createdAt: now, expiresAt: now + 1_000 };
      await store.putStoredResponse(response);
      await store.putStoredResponse({ ...response, id: 'resp_2', expiresAt: now + 10 });
      expect(await store.getStoredResponses('m1', ['resp_1', 'resp_2', 'resp_3'], now)).toEqual(expect.arrayContaining([response, { ...response, id: 'resp_2', expiresAt: now + 10 }]));
      expect(await store.getStoredResponses('m2', ['resp_1'], now)).toEqual([]);
      expect(await store.getStoredResponseOutputs('m1', ['resp_1', 'resp_3'], now)).toEqual([{ id: 'resp_1', output: response.output }]);
      expect(await store.getStoredResponseOutputs('m2', ['resp_1'], now)).toEqual([]);
      expect(await store.getStoredResponses('m1', ['resp_1', 'resp_2'], now + 500)).toEqual([response]);
      expect(await store.deleteExpiredStoredResponses(now + 500, 10)).toBe(1);
      expect(await store.getStoredResponses('m1', ['resp_2'], now)).toEqual([]);
    });

    it('walks a conversation of kept responses newest first, stopping at what is not the account\'s, expired or missing', async () => {
      const now = Date.now();
      const kept = (id: string, previousResponseId: string | null, fields: { accountId?: string; expiresAt?: number } = {}) => ({
        id, accountId: fields.accountId ?? 'm1', output: '[]', response: null, input: `["${id}"]`, previousResponseId, createdAt: now, expiresAt: fields.expiresAt ?? now + 1_000,
      });
      for (const response of [kept('c1', null), kept('c2', 'c1'), kept('c3', 'c2'), kept('c4', 'c3'), kept('x1', 'c4', { accountId: 'm2' }), kept('e1', null, { expiresAt: now + 10 }), kept('e2', 'e1'), kept('g2', 'gone')]) {
        await store.putStoredResponse(response);
      }
      expect((await store.getStoredResponseChain('m1', 'c4', now, 100)).map((r) => r.id)).toEqual(['c4', 'c3', 'c2', 'c1']);
      expect(await store.getStoredResponseChain('m1', 'c2', now, 100)).toEqual([
        { id: 'c2', input: '["c2"]', output: '[]', previousResponseId: 'c1' },
        { id: 'c1', input: '["c1"]', output: '[]', previousResponseId: null },
      ]);
      expect((await store.getStoredResponseChain('m1', 'c4', now, 2)).map((r) => r.id)).toEqual(['c4', 'c3']);
      expect(await store.getStoredResponseChain('m1', 'x1', now, 100)).toEqual([]);
      expect((await store.getStoredResponseChain('m2', 'x1', now, 100)).map((r) => r.id)).toEqual(['x1']);
      expect((await store.getStoredResponseChain('m1', 'e2', now + 500, 100)).map((r) => r.id)).toEqual(['e2']);
      expect((await store.getStoredResponseChain('m1', 'g2', now, 100)).map((r) => r.id)).toEqual(['g2']);
      expect(await store.getStoredResponseChain('m1', 'nothing', now, 100)).toEqual([]);

      // Extending a conversation's time: only its own rows, only those that expire before staleBefore.
      await store.putStoredResponse(kept('c0', null, { expiresAt: now + 5_000 }));
      expect(await store.extendStoredResponseChain('m1', 'c3', now, 100, now + 9_000, now + 2_000)).toBe(3);
      const times = async (ids: string[]) => (await store.getStoredResponses('m1', ids, now)).map((r) => [r.id, r.expiresAt - now]).sort();
      expect(await times(['c0', 'c1', 'c2', 'c3', 'c4'])).toEqual([['c0', 5_000], ['c1', 9_000], ['c2', 9_000], ['c3', 9_000], ['c4', 1_000]]);
      expect(await store.extendStoredResponseChain('m2', 'c3', now, 100, now + 20_000, now + 20_000)).toBe(0);
      expect(await store.extendStoredResponseChain('m1', 'c3', now, 2, now + 20_000, now + 20_000)).toBe(2);
      expect(await times(['c1', 'c2', 'c3'])).toEqual([['c1', 9_000], ['c2', 20_000], ['c3', 20_000]]);

      expect(await store.deleteStoredResponse('m2', 'c3', now)).toBe(false);
      expect(await store.deleteStoredResponse('m1', 'e1', now + 500)).toBe(false);
      expect(await store.deleteStoredResponse('m1', 'c3', now)).toBe(true);
      expect(await store.deleteStoredResponse('m1', 'c3', now)).toBe(false);
      expect((await store.getStoredResponseChain('m1', 'c4', now, 100)).map((r) => r.id)).toEqual(['c4']);
    });

    it('lets a binding (status 0) give way to a response, and never a response to a binding', async () => {
      const now = Date.now();
      const commit = (record: IdempotencyRecord) => store.commitSettlements([{ requestId: record.requestId, charge: null, releaseReservation: false, usage: null, idempotency: record }]);
      await commit(recordOf('b', { requestId: 'first', status: BINDING_STATUS, body: Buffer.alloc(0), createdAt: now, expiresAt: now + 60_000 }));
      expect(await store.getIdempotencyRecord('b', now)).toMatchObject({ requestId: 'first', status: BINDING_STATUS });
      await commit(recordOf('b', { requestId: 'second', status: BINDING_STATUS, body: Buffer.alloc(0), createdAt: now + 1, expiresAt: now + 60_001 }));
      expect(await store.getIdempotencyRecord('b', now)).toMatchObject({ requestId: 'second', status: BINDING_STATUS });
      await commit(recordOf('b', { requestId: 'third', status: 200, createdAt: now + 2, expiresAt: now + 60_002 }));
      expect(await store.getIdempotencyRecord('b', now)).toMatchObject({ requestId: 'third', status: 200 });
      await commit(recordOf('b', { requestId: 'fourth', status: BINDING_STATUS, body: Buffer.alloc(0), createdAt: now + 3, expiresAt: now + 60_003 }));
      expect(await store.getIdempotencyRecord('b', now)).toMatchObject({ requestId: 'third', status: 200 });
    });

    it('keeps a live idempotency record over a second one, and replaces an expired one', async () => {
      const now = Date.now();
      await store.commitSettlements([{ requestId: 'a', charge: null, releaseReservation: false, usage: null, idempotency: recordOf('k', { requestId: 'a', createdAt: now, expiresAt: now + 1_000 }) }]);
      await store.commitSettlements([{ requestId: 'b', charge: null, releaseReservation: false, usage: null, idempotency: recordOf('k', { requestId: 'b', createdAt: now + 10, expiresAt: now + 2_000 }) }]);
      expect((await store.getIdempotencyRecord('k', now))?.requestId).toBe('a');
      await store.commitSettlements([{ requestId: 'c', charge: null, releaseReservation: false, usage: null, idempotency: recordOf('k', { requestId: 'c', createdAt: now + 1_000, expiresAt: now + 3_000 }) }]);
      expect((await store.getIdempotencyRecord('k', now + 1_000))?.requestId).toBe('c');
    });

    it('sweeps expired idempotency records only, a batch at a time', async () => {
      const now = Date.now();
      const records = Array.from({ length: 5 }, (_, i) => recordOf(`old${i}`, { createdAt: now - 10_000, expiresAt: now - 1 }));
      records.push(recordOf('live', { createdAt: now, expiresAt: now + 60_000 }));
      await store.commitSettlements(records.map((r, i) => ({ requestId: `s${i}`, charge: null, releaseReservation: false, usage: null, idempotency: r })));
      expect(await store.deleteExpiredIdempotencyRecords(now, 3)).toBe(3);
      expect(await store.deleteExpiredIdempotencyRecords(now, 3)).toBe(2);
      expect(await store.deleteExpiredIdempotencyRecords(now, 3)).toBe(0);
      expect((await store.getIdempotencyRecord('live', now))?.id).toBe('live');
    });

    it('keeps assets and deletes the old ones, returning their blobs', async () => {
      const now = Date.now();
      const asset = { id: 'asset_0123456789abcdef01234567', accountId: 'm1', blobId: 'blob_aaaaaaaaaaaaaaaaaaaaaaaa', contentType: 'image/png', bytes: 1234, requestId: 'req_1', createdAt: now - 10_000 };
      await store.putAsset(asset);
      await store.putAsset({ ...asset, id: 'asset_fedcba9876543210fedcba98', blobId: 'blob_bbbbbbbbbbbbbbbbbbbbbbbb', createdAt: now });
      expect(await store.getAsset(asset.id)).toEqual(asset);
      expect(await store.getAsset('asset_missing')).toBeUndefined();
      expect(await store.deleteAssetsCreatedBefore(now - 1, 10)).toEqual(['blob_aaaaaaaaaaaaaaaaaaaaaaaa']);
      expect(await store.getAsset(asset.id)).toBeUndefined();
      expect((await store.getAsset('asset_fedcba9876543210fedcba98'))?.bytes).toBe(1234);
    });

    it('keeps uploaded files, lists them by cursor in both orders, deletes and expires them', async () => {
      const now = Date.now();
      const file = (i: number, account = 'm1'): FileRecord => ({
        id: `file-${String(i).padStart(24, '0')}`,
        accountId: account,
        blobId: `blob_${String(i).padStart(24, '0')}`,
        filename: `f${i}.wav`,
        purpose: 'transcription',
        contentType: 'audio/wav',
        bytes: 100 + i,
        createdAt: now + i,
        expiresAt: i === 4 ? now - 1 : now + 60_000,
      });
      for (const i of [1, 2, 3, 4]) await store.putFile(file(i));
      await store.putFile(file(5, 'other'));
      expect(await store.getFile(file(2).id)).toEqual(file(2));
      const ids = (files: FileRecord[]): string[] => files.map((f) => f.filename);
      expect(ids(await store.listFiles('m1', { limit: 2, order: 'desc' }, now - 10))).toEqual(['f4.wav', 'f3.wav']);
      expect(ids(await store.listFiles('m1', { limit: 2, order: 'desc', after: file(3).id }, now - 10))).toEqual(['f2.wav', 'f1.wav']);
      expect(ids(await store.listFiles('m1', { limit: 10, order: 'asc', after: file(2).id }, now - 10))).toEqual(['f3.wav', 'f4.wav']);
      // A file past its expiry is left out before the sweep deletes it.
      expect(ids(await store.listFiles('m1', { limit: 10, order: 'desc' }, now))).toEqual(['f3.wav', 'f2.wav', 'f1.wav']);
      // Another account's cursor is no cursor at all.
      expect(await store.listFiles('m1', { limit: 10, order: 'asc', after: file(5, 'other').id }, now)).toEqual([]);
      expect(await store.deleteExpiredFiles(now, 10)).toEqual([file(4).blobId]);
      expect(await store.deleteFile(file(1).id)).toBe(file(1).blobId);
      expect(await store.deleteFile(file(1).id)).toBeUndefined();
      expect(ids(await store.listFiles('m1', { limit: 10, order: 'asc' }, now))).toEqual(['f2.wav', 'f3.wav']);
    });

    it('lists the files of one purpose when asked, its cursor included', async () => {
      const now = Date.now();
      const file = (i: number, purpose: string): FileRecord => ({
        id: `file-7${String(i).padStart(23, '0')}`, accountId: 'p1', blobId: `blob_7${String(i).padStart(23, '0')}`, filename: `p${i}`,
        purpose, contentType: 'application/jsonl', bytes: 1, createdAt: now + i, expiresAt: now + 60_000,
      });
      for (const [i, purpose] of [[1, 'batch'], [2, 'user_data'], [3, 'batch'], [4, 'user_data'], [5, 'batch']] as const) await store.putFile(file(i, purpose));
      const names = (files: FileRecord[]): string[] => files.map((f) => f.filename);
      expect(names(await store.listFiles('p1', { limit: 10, order: 'asc' }, now, 'batch'))).toEqual(['p1', 'p3', 'p5']);
      expect(names(await store.listFiles('p1', { limit: 1, order: 'desc', after: file(5, 'batch').id }, now, 'batch'))).toEqual(['p3']);
      expect(names(await store.listFiles('p1', { limit: 10, order: 'asc' }, now))).toEqual(['p1', 'p2', 'p3', 'p4', 'p5']);
    });

    it('places a page after a cursor whose file was deleted, by the time its id carries', async () => {
      const now = Date.now();
      const file = (i: number): FileRecord => ({
        id: `file-${orderedHexAt(now + i)}`,
        accountId: 'd1',
        blobId: `blob_${String(i).padStart(24, '0')}`,
        filename: `f${i}.wav`,
        purpose: 'transcription',
        contentType: 'audio/wav',
        bytes: 100,
        createdAt: now + i,
        expiresAt: now + 60_000,
      });
      const files = [1, 2, 3, 4, 5].map(file);
      for (const f of files) await store.putFile(f);
      const names = (page: FileRecord[]): string[] => page.map((f) => f.filename);
      const first = await store.listFiles('d1', { limit: 2, order: 'desc' }, now);
      expect(names(first)).toEqual(['f5.wav', 'f4.wav']);
      // The client deletes each file of the page, then asks for the next one.
      for (const f of first) await store.deleteFile(f.id);
      expect(names(await store.listFiles('d1', { limit: 2, order: 'desc', after: first[1]!.id }, now))).toEqual(['f3.wav', 'f2.wav']);
      expect(names(await store.listFiles('d1', { limit: 10, order: 'asc', after: first[1]!.id }, now))).toEqual([]);
      // A random id (as made before ids were ordered) that no row has is still no cursor.
      expect(await store.listFiles('d1', { limit: 10, order: 'desc', after: 'file-ffffffffffffffffffffffff' }, now)).toEqual([]);
    });

    it('keeps video jobs, updates them only in the expected status, and leases due jobs to one owner at a time', async () => {
      const now = Date.now();
      const job = (i: number, fields: Partial<VideoJobRecord> = {}): VideoJobRecord => ({
        id: `video_${String(i).padStart(24, '0')}`,
        accountId: 'm1',
        apiKeyId: 'k1',
        requestId: `req_${i}`,
        model: 'video-model',
        provider: 'mock',
        upstreamModel: 'mock-video',
        upstreamId: `up_${i}`,
        status: 'queued',
        progress: 0,
        prompt: 'a cat',
        seconds: 4,
        size: '720x1280',
        chargedMicros: 400_000,
        errorCode: null,
        errorMessage: null,
        assetId: null,
        createdAt: now + i,
        updatedAt: now + i,
        completedAt: null,
        nextPollAt: now - 1,
        pollFailures: 0,
        leaseOwner: null,
        leaseUntil: null,
        ...fields,
      });
      await store.putVideoJob(job(1));
      await store.putVideoJob(job(2, { status: 'completed', progress: 100, assetId: 'asset_x', completedAt: now }));
      await store.putVideoJob(job(3, { nextPollAt: now + 60_000 }));
      expect(await store.getVideoJob(job(2).id)).toEqual(job(2, { status: 'completed', progress: 100, assetId: 'asset_x', completedAt: now }));
      expect((await store.listVideoJobs('m1', { limit: 10, order: 'desc' })).map((j) => j.id)).toEqual([job(3).id, job(2).id, job(1).id]);

      const leased = await store.leaseDueVideoJobs('a', now, 30_000, 10);
      expect(leased.map((j) => [j.id, j.leaseOwner])).toEqual([[job(1).id, 'a']]);
      expect(await store.leaseDueVideoJobs('b', now, 30_000, 10)).toEqual([]);
      expect(await store.updateVideoJob(job(1).id, { progress: 50 }, ['queued', 'in_progress'], { ifLeaseOwner: 'b' })).toBe(false);
      expect(await store.updateVideoJob(job(1).id, { status: 'in_progress', progress: 50, leaseOwner: null, leaseUntil: null }, ['queued', 'in_progress'], { ifLeaseOwner: 'a' })).toBe(true);
      expect(await store.updateVideoJob(job(2).id, { status: 'cancelled' }, ['queued', 'in_progress'])).toBe(false);
      const after = await store.getVideoJob(job(1).id);
      expect([after?.status, after?.progress, after?.leaseOwner]).toEqual(['in_progress', 50, null]);
      // An expired lease is free again.
      expect((await store.leaseDueVideoJobs('b', now + 1, 10, 10)).map((j) => j.id)).toEqual([job(1).id]);
      expect((await store.leaseDueVideoJobs('c', now + 20, 10, 10)).map((j) => j.id)).toEqual([job(1).id]);
      // A refund goes with the change that earns it, once; a holder whose lease another took changes nothing and refunds nothing.
      await store.createAccountIfAbsent({ id: 'm1', name: null, tier: 'free', balanceMicros: 0 });
      const refund = { accountId: 'm1', kind: 'refund' as const, amountMicros: 400_000, requestId: 'req_1', apiKeyId: 'k1', note: 'video failed' };
      expect(await store.updateVideoJob(job(1).id, { status: 'failed' }, ['queued', 'in_progress'], { ifLeaseOwner: 'b', refund })).toBe(false);
      expect([(await store.getVideoJob(job(1).id))?.status, (await store.getAccount('m1'))?.balanceMicros]).toEqual(['in_progress', 0]);
      expect(await store.updateVideoJob(job(1).id, { status: 'failed' }, ['queued', 'in_progress'], { refund })).toBe(true);
      expect(await store.updateVideoJob(job(1).id, { status: 'cancelled' }, ['queued', 'in_progress'], { refund })).toBe(false);
      expect((await store.getAccount('m1'))?.balanceMicros).toBe(400_000);
      expect(await store.deleteVideoJob(job(2).id)).toBe(true);
      expect(await store.deleteVideoJob(job(2).id)).toBe(false);
    });

    it('lists accounts and deletes keys', async () => {
      await store.createAccountIfAbsent({ id: 'm2', name: null, tier: 'free', balanceMicros: 0 });
      await store.createAccountIfAbsent({ id: 'm1', name: null, tier: 'pro', balanceMicros: 7 });
      expect((await store.listAccounts()).map((a) => [a.id, a.balanceMicros])).toEqual([['m1', 7], ['m2', 0]]);
      await store.putApiKey({ id: 'kk', accountId: 'm1', name: null, secretHash: 'ab'.repeat(32), status: 'active', scope: null });
      expect(await store.deleteApiKey('kk')).toBe(true);
      expect(await store.deleteApiKey('kk')).toBe(false);
      expect(await store.getApiKey('kk')).toBeUndefined();
    });
  });
}

function recordOf(id: string, fields: Partial<IdempotencyRecord> = {}): IdempotencyRecord {
  const now = Date.now();
  return {
    id,
    accountId: 'm1',
    fingerprint: 'f'.repeat(64),
    requestId: 'req_1',
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: Buffer.from('{}'),
    createdAt: now,
    expiresAt: now + 60_000,
    ...fields,
  };
}
