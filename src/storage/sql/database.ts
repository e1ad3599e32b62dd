/** The tables as the shared query layer sees them (the same on SQLite and PostgreSQL). */
import type { Generated } from 'kysely';

export interface AccountsTable {
  id: string;
  name: string | null;
  tier: string;
  balance_micros: number;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string | null;
  secret_hash: string;
  status: string;
  /** JSON text of the key's scope, or null for no scope. */
  scope: string | null;
  created_at: number;
}

export interface MigrationsLock {
  id: Generated<number>;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
}
