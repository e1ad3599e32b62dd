/**
 * Keys and their accounts, answered from memory on the hot path. A miss reads the store once
 * (concurrent misses for the same key share one read); an entry lives for `ttlMs`, so a change
 * made by another instance is seen within that time, and a change made through this instance is
 * seen at once because it invalidates the entry. Unknown ids are remembered briefly too, so a
 * flood of made-up keys cannot turn into a flood of store reads.
 */
import type { Store, AccountRecord, ApiKeyRecord } from '../storage/types.js';

export interface CachedKey {
  key: ApiKeyRecord;
  account: AccountRecord;
}

interface Entry {
  value: CachedKey | null;
  expiresAt: number;
}

export interface KeyCacheOptions {
  ttlMs: number;
  negativeTtlMs: number;
  maxEntries: number;
}

export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<CachedKey | null>>();

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
      pending = this.read(id).finally(() => this.loading.delete(id));
      this.loading.set(id, pending);
    }
    return pending;
  }

  invalidateKey(id: string): void {
    this.entries.delete(id);
  }

  invalidateAccount(accountId: string): void {
    for (const [id, entry] of this.entries) {
      if (entry.value?.account.id === accountId) this.entries.delete(id);
    }
  }

  private async read(id: string): Promise<CachedKey | null> {
    const key = await this.store.getApiKey(id);
    const account = key && (await this.store.getAccount(key.accountId));
    const value = key && account ? { key, account } : null;
    if (this.entries.size >= this.options.maxEntries) {
      // Evict the oldest entry (Map keeps insertion order); good enough for a bounded cache.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(id, { value, expiresAt: Date.now() + (value ? this.options.ttlMs : this.options.negativeTtlMs) });
    return value;
  }
}
