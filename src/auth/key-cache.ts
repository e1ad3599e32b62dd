/**
 * Keys and their accounts, answered from memory on the hot path. A miss reads the store once
 * (concurrent misses for the same key share one read); an entry lives for `ttlMs`, so a change
 * made by another instance is seen within that time (at once when the instances share Redis:
 * invalidations are broadcast, see `onInvalidate`), and a change made through this instance is
 * seen at once because it invalidates the entry. Unknown ids are remembered briefly too, so a
 * flood of made-up keys cannot turn into a flood of store reads; they are kept apart from the
 * known keys, with a bound of their own, so that such a flood evicts only other unknown ids and
 * never pushes the gateway's real keys out of memory.
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
  /** Ids the store does not know, remembered for `negativeTtlMs`. */
  private readonly unknown = new Map<string, number>();
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

  /** Unknown ids remembered at most: a tenth of the known keys' room, at least one. */
  private get maxUnknown(): number {
    return Math.max(1, Math.floor(this.options.maxEntries / 10));
  }

  /** The cached value, or undefined when the store must be asked (see `load`). */
  peek(id: string, now: number): CachedKey | null | undefined {
    const entry = this.entries.get(id);
    if (entry !== undefined) return entry.expiresAt <= now ? undefined : entry.value;
    const unknownUntil = this.unknown.get(id);
    return unknownUntil !== undefined && unknownUntil > now ? null : undefined;
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
    this.unknown.clear();
  }

  /** Applies an invalidation, made here or received from another instance. */
  drop(invalidation: Invalidation): void {
    if (invalidation.kind === 'key') this.dropKey(invalidation.id);
    else this.dropAccount(invalidation.id);
  }

  private dropKey(id: string): void {
    this.generation++;
    this.entries.delete(id);
    this.unknown.delete(id);
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
    if (value === null) {
      remember(this.unknown, id, Date.now() + this.options.negativeTtlMs, this.maxUnknown);
      return value;
    }
    this.unknown.delete(id);
    remember(this.entries, id, { value, expiresAt: Date.now() + this.options.ttlMs }, this.options.maxEntries);
    return value;
  }
}

/** Sets an entry, evicting the oldest (Map keeps insertion order) when full: good enough for a bounded cache. */
function remember<T>(map: Map<string, T>, id: string, value: T, max: number): void {
  if (!map.has(id) && map.size >= max) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
  map.set(id, value);
}
