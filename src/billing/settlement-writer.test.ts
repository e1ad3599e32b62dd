import { describe, expect, it } from 'vitest';
import { SettlementWriter } from './settlement-writer.js';
import { createLogger } from '../logging/logger.js';
import type { Settlement, Store } from '../storage/types.js';

const logger = createLogger('silent');

/** A store whose commits are recorded, and fail while `failing` is set. */
function fakeStore() {
  const batches: string[][] = [];
  const fake = {
    failing: false,
    batches,
    commitSettlements(settlements: readonly Settlement[]): Promise<void> {
      if (fake.failing) return Promise.reject(new Error('disk full'));
      batches.push(settlements.map((s) => s.requestId));
      return Promise.resolve();
    },
  };
  return fake;
}

function settlement(requestId: string): Settlement {
  return { requestId, charge: { accountId: 'a', kind: 'charge', amountMicros: -1, requestId, apiKeyId: 'k', note: null }, releaseReservation: false, usage: null };
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

  it('lets a caller go after waitMs while the store fails, and still commits once it recovers', async () => {
    const store = fakeStore();
    store.failing = true;
    const writer = new SettlementWriter(store as unknown as Store, logger, 60);
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

  it('gives each caller its own waitMs, counted from its own commit', async () => {
    const store = fakeStore();
    store.failing = true;
    const writer = new SettlementWriter(store as unknown as Store, logger, 80);
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
});
