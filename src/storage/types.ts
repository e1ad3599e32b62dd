/**
 * The storage interface. Every backend implements it and runs the same conformance suite
 * (src/storage/store.conformance.ts). Nothing here knows HTTP; the hot path never calls it
 * directly except on a cache miss.
 */

export type KeyStatus = 'active' | 'disabled';

export interface KeyScope {
  models?: string[];
  endpoints?: string[];
  sdks?: string[];
}

export interface AccountRecord {
  id: string;
  name: string | null;
  tier: string;
  /** Credit balance in millionths of a credit, so that money is always an exact integer. */
  balanceMicros: number;
  createdAt: number;
}

export interface ApiKeyRecord {
  /** The public part of the key (`sk-tg-<id>-…`). */
  id: string;
  accountId: string;
  name: string | null;
  /** SHA-256 (hex) of the secret part; the key itself is never stored. */
  secretHash: string;
  status: KeyStatus;
  scope: KeyScope | null;
  createdAt: number;
}

export type NewAccount = Omit<AccountRecord, 'createdAt'>;

export type NewApiKey = Omit<ApiKeyRecord, 'createdAt'>;

export interface Store {
  /** Brings the schema to the latest version; runs at every start. */
  migrate(): Promise<void>;
  getAccount(id: string): Promise<AccountRecord | undefined>;
  /** Creates the account if absent; returns whether it was created. */
  createAccountIfAbsent(account: NewAccount): Promise<boolean>;
  updateAccount(id: string, changes: { name?: string | null; tier?: string }): Promise<void>;
  getApiKey(id: string): Promise<ApiKeyRecord | undefined>;
  /** Inserts a key, or replaces every field of the key with the same id. */
  putApiKey(key: NewApiKey): Promise<void>;
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]>;
  close(): Promise<void>;
}
