import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../storage/open-store.js';
import type { Store } from '../storage/types.js';
import { KeyCache } from './key-cache.js';

let store: Store;
beforeEach(async () => {
  store = await openStore('sqlite://:memory:');
  await store.createAccountIfAbsent({ id: 'acct', name: null, tier: 'standard', balanceMicros: 0 });
  await store.putApiKey({ id: 'KnownKey0001', accountId: 'acct', name: null, secretHash: '0'.repeat(64), status: 'active', scope: null });
});
afterEach(() => store.close());

describe('KeyCache', () => {
  it('keeps a known key in memory through a flood of made-up ids, which evict only each other', async () => {
    const cache = new KeyCache(store, { ttlMs: 60_000, negativeTtlMs: 60_000, maxEntries: 20 });
    expect((await cache.load('KnownKey0001'))?.key.id).toBe('KnownKey0001');
    for (let i = 0; i < 100; i++) expect(await cache.load(`MadeUp${String(i).padStart(6, '0')}`)).toBeNull();
    const now = Date.now();
    expect(cache.peek('KnownKey0001', now)?.account.id).toBe('acct');
    // The latest unknown ids are remembered (no store read), the oldest were let go.
    expect(cache.peek('MadeUp000099', now)).toBeNull();
    expect(cache.peek('MadeUp000000', now)).toBeUndefined();
  });

  it('forgets an unknown id once told the key exists now', async () => {
    const cache = new KeyCache(store);
    expect(await cache.load('LaterKey0001')).toBeNull();
    expect(cache.peek('LaterKey0001', Date.now())).toBeNull();
    await store.putApiKey({ id: 'LaterKey0001', accountId: 'acct', name: null, secretHash: '1'.repeat(64), status: 'active', scope: null });
    cache.invalidateKey('LaterKey0001');
    expect(cache.peek('LaterKey0001', Date.now())).toBeUndefined();
    expect((await cache.load('LaterKey0001'))?.key.id).toBe('LaterKey0001');
  });
});
