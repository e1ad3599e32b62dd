/**
 * Versioned migrations, run at start by kysely's Migrator (which takes a lock, so several
 * instances starting at once apply each migration once). Written with the schema builder only,
 * so each runs unchanged on SQLite and PostgreSQL. Never edit a released migration: add one.
 */
import type { Kysely, Migration } from 'kysely';

export const migrations: Record<string, Migration> = {
  '0001_accounts_and_keys': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'varchar(128)', (c) => c.primaryKey())
        .addColumn('name', 'text')
        .addColumn('tier', 'varchar(128)', (c) => c.notNull())
        .addColumn('balance_micros', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('account_id', 'varchar(128)', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text')
        .addColumn('secret_hash', 'varchar(64)', (c) => c.notNull())
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('scope', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('api_keys_account_id').on('api_keys').column('account_id').execute();
    },
  },
};
