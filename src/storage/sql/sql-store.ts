/**
 * The Store over kysely: one body of queries for SQLite and PostgreSQL. Dialect differences stay
 * in the files that open each backend.
 */
import { Migrator, type Kysely, type Selectable } from 'kysely';
import type { Database, AccountsTable, ApiKeysTable } from './database.js';
import { migrations } from './migrations.js';
import type { AccountRecord, ApiKeyRecord, KeyScope, KeyStatus, NewAccount, NewApiKey, Store } from '../types.js';

function toAccount(row: Selectable<AccountsTable>): AccountRecord {
  return { id: row.id, name: row.name, tier: row.tier, balanceMicros: Number(row.balance_micros), createdAt: Number(row.created_at) };
}

function toApiKey(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    secretHash: row.secret_hash,
    status: row.status as KeyStatus,
    scope: row.scope === null ? null : (JSON.parse(row.scope) as KeyScope),
    createdAt: Number(row.created_at),
  };
}

export class SqlStore implements Store {
  constructor(
    private readonly db: Kysely<Database>,
    /** Where the migration bookkeeping tables live, when not the default schema. */
    private readonly schema?: string,
  ) {}

  async migrate(): Promise<void> {
    const migrator = new Migrator({
      db: this.db,
      provider: { getMigrations: () => Promise.resolve(migrations) },
      ...(this.schema ? { migrationTableSchema: this.schema } : {}),
    });
    const { error, results } = await migrator.migrateToLatest();
    if (error) {
      const failed = results?.find((r) => r.status === 'Error')?.migrationName;
      throw new Error(`storage migration ${failed ?? ''} failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`);
    }
  }

  async getAccount(id: string): Promise<AccountRecord | undefined> {
    const row = await this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toAccount(row);
  }

  async createAccountIfAbsent(account: NewAccount): Promise<boolean> {
    const result = await this.db
      .insertInto('accounts')
      .values({ id: account.id, name: account.name, tier: account.tier, balance_micros: account.balanceMicros, created_at: Date.now() })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async updateAccount(id: string, changes: { name?: string | null; tier?: string }): Promise<void> {
    if (changes.name === undefined && changes.tier === undefined) return;
    await this.db.updateTable('accounts').set(changes).where('id', '=', id).execute();
  }

  async getApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toApiKey(row);
  }

  async putApiKey(key: NewApiKey): Promise<void> {
    const values = {
      account_id: key.accountId,
      name: key.name,
      secret_hash: key.secretHash,
      status: key.status,
      scope: key.scope === null ? null : JSON.stringify(key.scope),
    };
    await this.db
      .insertInto('api_keys')
      .values({ id: key.id, created_at: Date.now(), ...values })
      .onConflict((oc) => oc.column('id').doUpdateSet(values))
      .execute();
  }

  async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('created_at').execute();
    return rows.map(toApiKey);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}
