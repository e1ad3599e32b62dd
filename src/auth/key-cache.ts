/**
 * Keys and their accounts, answered from memory on the hot path. A miss reads the store once
 * (concurrent misses for the same key share one read); an entry lives for `ttlMs`, so a change
 * made by another instance is seen within that time (at once when the instances share Redis:
 * invalidations are broadcast, see `onInvalidate`), and a change made through this instance is
 * seen at once because it invalidates the entry. Unknown ids are remembered briefly too, so a
 * flood of made-up keys cannot turn into a flood of store reads.
 */
import type { Store, AccountRecord, ApiKeyRecord } from '../storage/types.js';
import { storeUnavailable } from '../storage/store-unavailable.js';

export interface CachedKey {
  key: ApiKeyRecord;
  account: AccountRecord;
}

interface Entry {
  value: CachedKey | null;
  expiresAt: number;
}

/** What an invalidation names, as broadcast to the other instances. */
export interface Invalidation {
  kind: 'key' | 'account';
  id: string;
}

export interface KeyCacheOptions {
  ttlMs: number;
  negativeTtlMs: number;
  maxEntries: number;
}

export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<CachedKey | null>>();
  /**
   * Bumped by every invalidation, so that a store read which started before a change cannot put
   * the old record back into the cache when it finishes.
   */
  private generation = 0;
  /** Told of every invalidation made here, to pass it on to the other instances. */
  onInvalidate: ((invalidation: Invalidation) => void) | null = null;

  constructor(
    private readonly store: Store,
    private readonly options: KeyCacheOptions = { ttlMs: 30_000, negativeTtlMs: 5_000, maxEntries: 100_000 },
  ) {}

  /** The cached value, or undefined when the store must be asked (see `load`). */
  peek(id: string, now: number): CachedKey | null | undefined {
    const entry = this.entries.get(id);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) return undefined;
    return entry.value;
  }

  load(id: string): Promise<CachedKey | null> {
    let pending = this.loading.get(id);
    if (pending === undefined) {
      const started: Promise<CachedKey | null> = this.read(id).finally(() => {
        if (this.loading.get(id) === started) this.loading.delete(id);
      });
      pending = started;
      this.loading.set(id, pending);
    }
    return pending;
  }

  invalidateKey(id: string): void {
    this.drop({ kind: 'key', id });
    this.onInvalidate?.({ kind: 'key', id });
  }

  invalidateAccount(accountId: string): void {
    this.drop({ kind: 'account', id: accountId });
    this.onInvalidate?.({ kind: 'account', id: accountId });
  }

  /** Forgets every key: invalidations from other instances may have been missed. */
  dropAll(): void {
    this.generation++;
    this.loading.clear();
    this.entries.clear();
  }

  /** Applies an invalidation, made here or received from another instance. */
  drop(invalidation: Invalidation): void {
    if (invalidation.kind === 'key') this.dropKey(invalidation.id);
    else this.dropAccount(invalidation.id);
  }

  private dropKey(id: string): void {
    this.generation++;
    this.entries.delete(id);
    // A read already under way may have seen the old record: later callers read again.
    this.loading.delete(id);
  }

  private dropAccount(accountId: string): void {
    this.generation++;
    this.loading.clear();
    for (const [id, entry] of this.entries) {
      if (entry.value?.account.id === accountId) this.entries.delete(id);
    }
  }

  private async read(id: string): Promise<CachedKey | null> {
    const generation = this.generation;
    let key: ApiKeyRecord | undefined;
    let account: AccountRecord | undefined;
    try {
      key = await this.store.getApiKey(id);
      account = key && (await this.store.getAccount(key.accountId));
    } catch (err) {
      throw storeUnavailable(err);
    }
    const value = key && account ? { key, account } : null;
    // Changed while reading: answer this caller, but let the next one read again.
    if (generation !== this.generation) return value;
    if (this.entries.size >= this.options.maxEntries) {
      // Evict the oldest entry (Map keeps insertion order); good enough for a bounded cache.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(id, { value, expiresAt: Date.now() + (value ? this.options.ttlMs : this.options.negativeTtlMs) });
    return value;
  }
}
