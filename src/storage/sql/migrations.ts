/**
 * Versioned migrations, run at start by kysely's Migrator (which takes a lock, so several
 * instances starting at once apply each migration once). Written with the schema builder, so each
 * runs unchanged on SQLite and PostgreSQL, except the one trigger the builder cannot write. Never
 * edit a released migration: add one.
 */
import { PostgresAdapter, sql, type Kysely, type Migration } from 'kysely';

/**
 * A usage record that carries its request's charge is part of the ledger: no statement deletes
 * it, whoever sends it. The store's retention never asks to, but during a rolling upgrade an
 * instance of an earlier version deletes old records whatever they carry, and the ledger would
 * lose those charges (its sum would no longer be the balance). The row is skipped, not refused, so
 * such a delete still removes the rest.
 */
async function keepChargedUsageRecords(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`create or replace function tollgate_keep_charged_usage() returns trigger language plpgsql as $$
      begin
        if old.charge_micros is not null then return null; end if;
        return old;
      end $$`.execute(db);
    await sql`create trigger usage_records_keep_charged before delete on usage_records for each row execute function tollgate_keep_charged_usage()`.execute(db);
  } else {
    await sql`create trigger usage_records_keep_charged before delete on usage_records when old.charge_micros is not null begin select raise(ignore); end`.execute(db);
  }
}

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
  '0002_ledger_reservations_usage': {
    async up(db: Kysely<unknown>) {
      // Credit held by requests in flight when reservations live in the store (several instances).
      await db.schema.alterTable('accounts').addColumn('reserved_micros', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema
        .createTable('ledger_entries')
        .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
        .addColumn('account_id', 'varchar(128)', (c) => c.notNull().references('accounts.id'))
        .addColumn('kind', 'varchar(16)', (c) => c.notNull())
        .addColumn('amount_micros', 'bigint', (c) => c.notNull())
        .addColumn('request_id', 'varchar(64)')
        .addColumn('api_key_id', 'varchar(32)')
        .addColumn('note', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      // One entry of a kind per request: a settlement sent twice charges once.
      await db.schema.createIndex('ledger_entries_request_kind').unique().on('ledger_entries').columns(['request_id', 'kind']).execute();
      await db.schema.createIndex('ledger_entries_account_time').on('ledger_entries').columns(['account_id', 'created_at']).execute();
      await db.schema
        .createTable('credit_reservations')
        .addColumn('request_id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('account_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('amount_micros', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('credit_reservations_expiry').on('credit_reservations').column('expires_at').execute();
      await db.schema
        .createTable('usage_records')
        .addColumn('request_id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('account_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('api_key_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('model', 'varchar(256)', (c) => c.notNull())
        .addColumn('provider', 'varchar(128)')
        .addColumn('upstream_model', 'varchar(256)')
        .addColumn('modality', 'varchar(32)', (c) => c.notNull())
        .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
        .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
        .addColumn('cost_micros', 'bigint', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('ended_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('usage_records_account_time').on('usage_records').columns(['account_id', 'started_at']).execute();
      await db.schema.createIndex('usage_records_key_time').on('usage_records').columns(['api_key_id', 'started_at']).execute();
    },
  },
  '0003_idempotency_records': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('idempotency_records')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('account_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('fingerprint', 'varchar(64)', (c) => c.notNull())
        .addColumn('request_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('headers', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('body_encoding', 'varchar(8)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('idempotency_records_expiry').on('idempotency_records').column('expires_at').execute();
    },
  },
  '0004_assets': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('assets')
        .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
        .addColumn('account_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('blob_id', 'varchar(40)', (c) => c.notNull())
        .addColumn('content_type', 'varchar(128)', (c) => c.notNull())
        .addColumn('bytes', 'bigint', (c) => c.notNull())
        .addColumn('request_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('assets_created_at').on('assets').column('created_at').execute();
    },
  },
  '0005_files_and_video_jobs': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('files')
        .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
        .addColumn('account_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('blob_id', 'varchar(40)', (c) => c.notNull())
        .addColumn('filename', 'varchar(512)', (c) => c.notNull())
        .addColumn('purpose', 'varchar(64)', (c) => c.notNull())
        .addColumn('content_type', 'varchar(128)', (c) => c.notNull())
        .addColumn('bytes', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('files_account_created').on('files').columns(['account_id', 'created_at']).execute();
      await db.schema.createIndex('files_expires_at').on('files').column('expires_at').execute();
      await db.schema
        .createTable('video_jobs')
        .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
        .addColumn('account_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('api_key_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('request_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('model', 'varchar(128)', (c) => c.notNull())
        .addColumn('provider', 'varchar(128)', (c) => c.notNull())
        .addColumn('upstream_model', 'varchar(256)', (c) => c.notNull())
        .addColumn('upstream_id', 'varchar(512)', (c) => c.notNull())
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('progress', 'integer', (c) => c.notNull())
        .addColumn('prompt', 'text', (c) => c.notNull())
        .addColumn('seconds', 'integer', (c) => c.notNull())
        .addColumn('size', 'varchar(32)', (c) => c.notNull())
        .addColumn('charged_micros', 'bigint', (c) => c.notNull())
        .addColumn('error_code', 'varchar(128)')
        .addColumn('error_message', 'text')
        .addColumn('asset_id', 'varchar(40)')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'bigint')
        .addColumn('next_poll_at', 'bigint', (c) => c.notNull())
        .addColumn('poll_failures', 'integer', (c) => c.notNull())
        .addColumn('lease_owner', 'varchar(64)')
        .addColumn('lease_until', 'bigint')
        .execute();
      await db.schema.createIndex('video_jobs_account_created').on('video_jobs').columns(['account_id', 'created_at']).execute();
      await db.schema.createIndex('video_jobs_due').on('video_jobs').columns(['status', 'next_poll_at']).execute();
    },
  },
  '0006_stored_responses': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('stored_responses')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('account_id', 'varchar(128)', (c) => c.notNull())
        .addColumn('output', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('stored_responses_expires_at').on('stored_responses').column('expires_at').execute();
    },
  },
  // What previous_response_id and GET /v1/responses/{id} need besides the output items.
  '0007_stored_response_conversations': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('stored_responses').addColumn('response', 'text').execute();
      await db.schema.alterTable('stored_responses').addColumn('input', 'text').execute();
      await db.schema.alterTable('stored_responses').addColumn('previous_response_id', 'varchar(64)').execute();
    },
  },
  // A request's charge kept on its usage record instead of a ledger row of its own: four B-trees
  // written a charged request instead of eight (see usage-charges.ts). Null: no charge on the row
  // (uncharged, or charged by a ledger row as before this migration). Usage retention deletes only
  // those rows, found through the partial index; the rows carrying charges are the ledger's.
  '0008_charges_on_usage_records': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('usage_records').addColumn('charge_micros', 'bigint').execute();
      await db.schema
        .createIndex('usage_records_uncharged_account_time')
        .on('usage_records')
        .columns(['account_id', 'started_at'])
        .where(sql.ref('charge_micros'), 'is', null)
        .execute();
      await keepChargedUsageRecords(db);
    },
  },
};
