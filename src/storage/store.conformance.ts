/**
 * The behaviour every Store backend must have. Each backend's test file runs this suite against a
 * fresh, empty store of its own.
 */
import { describe, expect, it, beforeEach, afterEach } from 'vitest';
import type { Store } from './types.js';

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

    it('creates an account once and keeps the first balance', async () => {
      expect(await store.createAccountIfAbsent({ id: 'a1', name: 'One', tier: 'free', balanceMicros: 5_000_000 })).toBe(true);
      expect(await store.createAccountIfAbsent({ id: 'a1', name: 'Again', tier: 'pro', balanceMicros: 1 })).toBe(false);
      const account = await store.getAccount('a1');
      expect(account).toMatchObject({ id: 'a1', name: 'One', tier: 'free', balanceMicros: 5_000_000 });
      expect(typeof account?.createdAt).toBe('number');
      expect(await store.getAccount('missing')).toBeUndefined();
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
    });

    it('refuses a key for an account that does not exist', async () => {
      await expect(store.putApiKey({ id: 'k9', accountId: 'ghost', name: null, secretHash: 'ef'.repeat(32), status: 'active', scope: null })).rejects.toThrow();
    });
  });
}
