import { describe, expect, it } from 'vitest';
import { SettlementWriter } from './settlement-writer.js';
import { createLogger } from '../logging/logger.js';
import { until } from '../../test/support/until.js';
import type { Settlement, Store, UsageRecord } from '../storage/types.js';
import type { SpillKind } from './settlement-spill.js';

const logger = createLogger('silent');

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Turns of the event loop until `promise` settles (at most 50). */
async function turnsUntil(promise: Promise<unknown>): Promise<number> {
  let done = false;
  void promise.then(() => (done = true));
  let turns = 0;
  while (!done && turns < 50) {
    await nextTurn();
    turns++;
  }
  return turns;
}

function commitMany(writer: SettlementWriter, prefix: string, count: number): Promise<void[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => writer.commit(settlement(`${prefix}${i}`))));
}

/**
 * A store whose commits are recorded, and fail while `failing` is set, or hang while `hanging` is;
 * one holding a request id in `refused` fails (the store answering) as long as it is in the batch.
 */
function fakeStore() {
  const batches: string[][] = [];
  const fake = {
    failing: false,
    hanging: false,
    refused: new Set<string>(),
    batches,
    commitSettlements(settlements: readonly Settlement[]): Promise<void> {
      if (fake.hanging) return new Promise(() => undefined);
      if (fake.failing) return Promise.reject(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }));
      if (settlements.some((s) => fake.refused.has(s.requestId))) return Promise.reject(Object.assign(new Error('value too long for type character varying(256)'), { code: '22001' }));
      batches.push(settlements.map((s) => s.requestId));
      return Promise.resolve();
    },
    ping(): Promise<void> {
      return fake.failing || fake.hanging ? Promise.reject(new Error('down')) : Promise.resolve();
    },
  };
  return fake;
}

/** A spill that keeps what it is given. */
function fakeSpill() {
  const written: Array<{ kind: SpillKind; ids: string[] }> = [];
  return {
    written,
    write(kind: SpillKind, settlements: readonly Settlement[]): string {
      written.push({ kind, ids: settlements.map((s) => s.requestId) });
      return `/spill/${kind}-${written.length}.jsonl`;
    },
  };
}

function settlement(requestId: string): Settlement {
  return { requestId, charge: { accountId: 'a', kind: 'charge', amountMicros: -1, requestId, apiKeyId: 'k', note: null }, releaseReservation: false, usage: null };
}

function usage(requestId: string): UsageRecord {
  return {
    requestId, accountId: 'a', apiKeyId: 'k', model: 'm', provider: 'p', upstreamModel: 'u', modality: 'chat',
    promptTokens: 1, completionTokens: 1, costMicros: 1, status: 200, latencyMs: 1, startedAt: 0, endedAt: 1,
  };
}

describe('SettlementWriter', () => {
  it('commits the settlements of one turn together, then lets their callers go', async () => {
    const store = fakeStore();
    const writer = new SettlementWriter(store as unknown as Store, logger);
    const durable: string[] = [];
    await Promise.all(['r1', 'r2', 'r3'].map((id) => writer.commit(settlement(id), false, () => durable.push(id))));
    expect(store.batches).toEqual([['r1', 'r2', 'r3']]);
    expect(durable).toEqual(['r1', 'r2', 'r3']);
    await writer.close();
  });

  it('after a busy commit, lets the next batch gather over the following turns', async () => {
    const store = fakeStore();
    const writer = new SettlementWriter(store as unknown as Store, logger);
    await commitMany(writer, 'a', 10);
    // Two requests finish in each of the next three turns: one commit takes all six.
    const later: Promise<void>[] = [];
    for (let turn = 0; turn < 3; turn++) {
      later.push(writer.commit(settlement(`b${turn}-0`)), writer.commit(settlement(`b${turn}-1`)));
      await nextTurn();
    }
    await Promise.all(later);
    expect(store.batches.map((b) => b.length)).toEqual([10, 6]);
    await writer.close();
  });

  it('does not gather after a small commit: a quiet gateway commits at the next turn', async () => {
    const store = fakeStore();
    const writer = new SettlementWriter(store as unknown as Store, logger);
    await writer.commit(settlement('q1'));
    expect(await turnsUntil(writer.commit(settlement('q2')))).toBeLessThanOrEqual(2);
    expect(store.batches).toEqual([['q1'], ['q2']]);
    await writer.close();
  });

  it('stops gathering as soon as a full batch waits', async () => {
    const store = fakeStore();
    const writer = new SettlementWriter(store as unknown as Store, logger);
    await commitMany(writer, 'a', 10);
    expect(await turnsUntil(commitMany(writer, 'b', 70))).toBeLessThanOrEqual(2);
    expect(store.batches.map((b) => b.length)).toEqual([10, 70]);
    await writer.close();
  });

  it('lets a caller go after waitMs while the store fails, and still commits once it recovers', async () => {
    const store = fakeStore();
    store.failing = true;
    const writer = new SettlementWriter(store as unknown as Store, logger, null, 60);
    let durable = false;
    const started = performance.now();
    await writer.commit(settlement('slow'), false, () => (durable = true));
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    expect(durable).toBe(false);
    expect(writer.backlog).toBe(1);
    store.failing = false;
    await writer.close();
    expect(durable).toBe(true);
    expect(store.batches).toEqual([['slow']]);
  });


  it('tells its observer of every write, with its size and time, and of every failed one', async () => {
    const store = fakeStore();
    const writer = new SettlementWriter(store as unknown as Store, logger, null, 60);
    const writes: Array<[number, number]> = [];
    let failures = 0;
    writer.observer = { committed: (count, ms) => writes.push([count, ms]), failed: () => failures++ };
    await commitMany(writer, 'w', 3);
    expect(writes.map(([count]) => count)).toEqual([3]);
    expect(writes[0]?.[1]).toBeGreaterThanOrEqual(0);
    store.failing = true;
    const waiting = writer.commit(settlement('f'));
    expect(await until(() => Promise.resolve(failures), (n) => n >= 2)).toBeGreaterThanOrEqual(2);
    store.failing = false;
    await waiting;
    await writer.close();
    expect(writes.map(([count]) => count)).toEqual([3, 1]);
    expect(store.batches).toEqual([['w0', 'w1', 'w2'], ['f']]);
  });

  it('takes a fault of its observer for no failed commit: nothing is written twice or retried', async () => {
    const store = fakeStore();
    const writer = new SettlementWriter(store as unknown as Store, logger);
    let failures = 0;
    writer.observer = {
      committed: () => {
        throw new Error('metrics broken');
      },
      failed: () => failures++,
    };
    const started = performance.now();
    await commitMany(writer, 'o', 2);
    await writer.commit(settlement('o2'));
    // A retry would wait RETRY_MS (200 ms) first.
    expect(performance.now() - started).toBeLessThan(150);
    await writer.close();
    expect(failures).toBe(0);
    expect(store.batches).toEqual([['o0', 'o1'], ['o2']]);
  });
  it('gives each caller its own waitMs, counted from its own commit', async () => {
    const store = fakeStore();
    store.failing = true;
    const writer = new SettlementWriter(store as unknown as Store, logger, null, 80);
    const first = writer.commit(settlement('a'));
    await new Promise((r) => setTimeout(r, 50));
    let secondDone = false;
    const second = writer.commit(settlement('b')).then(() => (secondDone = true));
    await first;
    // The first waited its 80 ms; the second, queued 50 ms later, is still waiting.
    expect(secondDone).toBe(false);
    await second;
    store.failing = false;
    await writer.close();
    expect(store.batches.flat()).toEqual(['a', 'b']);
  });

  it('writes usage records while charges keep coming: the backlog shrinks under sustained load', async () => {
    const store = fakeStore();
    const writer = new SettlementWriter(store as unknown as Store, logger);
    store.failing = true;
    for (let i = 0; i < 1_200; i++) writer.record(usage(`u${i}`));
    // Sustained load: while each commit runs, ten more requests finish, each with a charge and a usage record.
    let rounds = 0;
    let next = 1_200;
    const commitAll = store.commitSettlements.bind(store);
    store.commitSettlements = (settlements) => {
      if (!store.failing && rounds < 40) {
        rounds++;
        for (let i = 0; i < 10; i++) {
          void writer.commit(settlement(`c${rounds}-${i}`));
          writer.record(usage(`u${next++}`));
        }
      }
      return commitAll(settlements);
    };
    const first = writer.commit(settlement('first'));
    store.failing = false;
    await until(
      () => Promise.resolve(store.batches),
      (batches) => rounds === 40 && batches.some((b) => b.includes('c40-9')),
    );
    // 1,600 records were queued, 400 of them during the load; without riders none would be written yet.
    await first;
    expect(writer.backlog).toBeLessThanOrEqual(1_000);
    expect(store.batches.find((b) => b.includes('c1-0'))?.filter((id) => id.startsWith('u')).length).toBe(25);
    await writer.close();
    const written = store.batches.flat().filter((id) => id.startsWith('u'));
    expect(new Set(written).size).toBe(1_600);
    expect(written.length).toBe(1_600);
  });

  it('at close, spills what the store would not take within the grace, and lets every caller go', async () => {
    const store = fakeStore();
    const spill = fakeSpill();
    const writer = new SettlementWriter(store as unknown as Store, logger, spill, 60_000);
    store.failing = true;
    const waiting = writer.commit(settlement('kept'));
    writer.record(usage('u1'));
    const started = performance.now();
    await writer.close(300);
    expect(performance.now() - started).toBeLessThan(1_000);
    await waiting;
    expect(spill.written).toEqual([{ kind: 'unsettled', ids: ['kept', 'u1'] }]);
    expect(writer.backlog).toBe(0);
  });

  it('at close, does not wait on a commit that hangs past the grace: what it carried is spilled too', async () => {
    const store = fakeStore();
    const spill = fakeSpill();
    const writer = new SettlementWriter(store as unknown as Store, logger, spill, 60_000);
    store.hanging = true;
    void writer.commit(settlement('hung'));
    await new Promise((r) => setTimeout(r, 20));
    const started = performance.now();
    await writer.close(200);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(spill.written).toEqual([{ kind: 'unsettled', ids: ['hung'] }]);
  });

  it('at close, rejects when what is left can be kept nowhere, so that the process does not exit as if all were well', async () => {
    const store = fakeStore();
    const writer = new SettlementWriter(store as unknown as Store, logger, null, 60_000);
    store.failing = true;
    void writer.commit(settlement('lost'));
    await expect(writer.close(100)).rejects.toThrow(/1 settlements/);
  });

  it('sets aside a settlement the store refuses for what it holds, and commits the rest, before and after it', async () => {
    const store = fakeStore();
    const spill = fakeSpill();
    const writer = new SettlementWriter(store as unknown as Store, logger, spill, 60_000);
    store.refused.add('bad');
    await Promise.all([writer.commit(settlement('before')), writer.commit(settlement('bad')), writer.commit(settlement('after'))]);
    await writer.commit(settlement('later'));
    expect(store.batches.flat()).toEqual(['before', 'after', 'later']);
    expect(spill.written).toEqual([{ kind: 'rejected', ids: ['bad'] }]);
    await writer.close();
  });

  it('sets nothing aside while the store cannot write (full, though it answers): the batch waits whole for it', async () => {
    const store = fakeStore();
    const spill = fakeSpill();
    const writer = new SettlementWriter(store as unknown as Store, logger, spill, 50);
    let failures = 0;
    writer.observer = { committed: () => undefined, failed: () => failures++ };
    store.failing = true;
    // It answers a ping all along: only what a write's failure says tells a full disk from a bad settlement.
    store.ping = () => Promise.resolve();
    const waiting = writer.commit(settlement('a'));
    await until(() => Promise.resolve(failures), (n) => n >= 5);
    expect(spill.written).toEqual([]);
    store.failing = false;
    await waiting;
    await writer.close();
    expect(store.batches.flat()).toEqual(['a']);
  });

  it('writes out for the next start what comes after the close, rather than dropping it', async () => {
    const store = fakeStore();
    const spill = fakeSpill();
    const writer = new SettlementWriter(store as unknown as Store, logger, spill, 60_000);
    await writer.close();
    await writer.commit(settlement('late'));
    writer.record(usage('late-usage'));
    expect(spill.written).toEqual([{ kind: 'unsettled', ids: ['late'] }, { kind: 'unsettled', ids: ['late-usage'] }]);
    expect(store.batches).toEqual([]);
  });

  it('keeps a refused settlement queued when it cannot be written out either', async () => {
    const store = fakeStore();
    const writer = new SettlementWriter(store as unknown as Store, logger, { write: () => { throw new Error('disk full'); } }, 60_000);
    store.refused.add('bad');
    void writer.commit(settlement('bad'));
    let failures = 0;
    writer.observer = { committed: () => undefined, failed: () => failures++ };
    await until(() => Promise.resolve(failures), (n) => n >= 5);
    expect(writer.backlog).toBe(1);
    store.refused.clear();
    await until(() => Promise.resolve(writer.backlog), (n) => n === 0);
    expect(store.batches.flat()).toEqual(['bad']);
    await writer.close();
  });
});
