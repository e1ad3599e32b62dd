/**
 * The Store over kysely: one body of queries for SQLite and PostgreSQL. Dialect differences stay
 * in the files that open each backend.
 */
import { SequentialIds } from '../../util/ordered-id.js';
import { Migrator, sql, type ExpressionBuilder, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database, AccountsTable, ApiKeysTable, LedgerEntriesTable, UsageRecordsTable } from './database.js';
import { chargeEntryIdSql, chargeEntryOf, chargeOnRecord, requestOfChargeEntry } from './usage-charges.js';
import { migrations } from './migrations.js';
import { idempotencyRecordOf, idempotencyRow } from './idempotency-rows.js';
import { fileOf, fileRow } from './file-rows.js';
import { videoJobOf, videoJobRow, videoJobUpdate } from './video-job-rows.js';
import { listPage } from './list-page.js';
import type {
  AccountRecord,
  AssetRecord,
  FileRecord,
  ListPage,
  VideoJobChanges,
  VideoJobRecord,
  VideoJobStatus,
  ApiKeyChanges,
  ApiKeyRecord,
  CreditReservation,
  IdempotencyRecord,
  KeyScope,
  KeyStatus,
  LedgerCursor,
  LedgerEntry,
  LedgerKind,
  NewAccount,
  NewApiKey,
  NewLedgerEntry,
  ReservationResult,
  Settlement,
  StoredResponse,
  StoredResponseTurn,
  Store,
  UsageQuery,
  UsageRecord,
  UsageRow,
} from '../types.js';
import { BINDING_STATUS, BalanceOutOfRangeError, MAX_BALANCE_MICROS } from '../types.js';

const DAY_MS = 86_400_000;

const ledgerIds = new SequentialIds('le_');

/** Ledger ids grow with time: new entries are appended to the primary-key index (see SequentialIds). */
export function newLedgerId(): string {
  return ledgerIds.next();
}

function ledgerRow(entry: NewLedgerEntry, now: number): LedgerEntriesTable {
  return {
    id: newLedgerId(),
    account_id: entry.accountId,
    kind: entry.kind,
    amount_micros: entry.amountMicros,
    request_id: entry.requestId,
    api_key_id: entry.apiKeyId,
    note: entry.note,
    created_at: now,
  };
}

function usageRow(u: UsageRecord, chargeMicros: number | null): UsageRecordsTable {
  return {
    request_id: u.requestId,
    account_id: u.accountId,
    api_key_id: u.apiKeyId,
    model: u.model,
    provider: u.provider,
    upstream_model: u.upstreamModel,
    modality: u.modality,
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    cost_micros: u.costMicros,
    status: u.status,
    latency_ms: Math.round(u.latencyMs),
    started_at: u.startedAt,
    ended_at: u.endedAt,
    charge_micros: chargeMicros,
  };
}

const LEDGER_COLUMNS = ['id', 'account_id', 'kind', 'amount_micros', 'request_id', 'api_key_id', 'note', 'created_at'] as const;

function toLedgerEntry(row: Selectable<LedgerEntriesTable>): LedgerEntry {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind as LedgerKind,
    amountMicros: Number(row.amount_micros),
    requestId: row.request_id,
    apiKeyId: row.api_key_id,
    note: row.note,
    createdAt: Number(row.created_at),
  };
}

/** Sums amounts per account, for one UPDATE per account instead of one per row. */
function perAccount(rows: ReadonlyArray<{ account_id: string; amount_micros: number | string }>): Map<string, number> {
  const sums = new Map<string, number>();
  for (const row of rows) sums.set(row.account_id, (sums.get(row.account_id) ?? 0) + Number(row.amount_micros));
  return sums;
}

function toAccount(row: Pick<Selectable<AccountsTable>, 'id' | 'name' | 'tier' | 'balance_micros' | 'created_at'>): AccountRecord {
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

  /** `db`: a connection of its own for the migrations, when the store's own have statement timeouts. */
  async migrate(db: Kysely<Database> = this.db): Promise<void> {
    const migrator = new Migrator({
      db,
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
    return this.db.transaction().execute(async (trx) => {
      const now = Date.now();
      const result = await trx
        .insertInto('accounts')
        .values({ id: account.id, name: account.name, tier: account.tier, balance_micros: account.balanceMicros, created_at: now })
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      const created = Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
      // The opening credit is a top-up like any other, so the balance stays the ledger's sum.
      if (created && account.balanceMicros !== 0) {
        await trx
          .insertInto('ledger_entries')
          .values(ledgerRow({ accountId: account.id, kind: 'topup', amountMicros: account.balanceMicros, requestId: account.openingRequestId ?? null, apiKeyId: null, note: 'opening credit' }, now))
          .execute();
      }
      return created;
    });
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

  async updateApiKey(id: string, changes: ApiKeyChanges): Promise<ApiKeyRecord | undefined> {
    const set = {
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.status !== undefined ? { status: changes.status } : {}),
      ...(changes.scope !== undefined ? { scope: changes.scope === null ? null : JSON.stringify(changes.scope) } : {}),
    };
    if (Object.keys(set).length === 0) return this.getApiKey(id);
    const row = await this.db.updateTable('api_keys').set(set).where('id', '=', id).returningAll().executeTakeFirst();
    return row && toApiKey(row);
  }

  async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('created_at').execute();
    return rows.map(toApiKey);
  }

  async deleteApiKey(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('api_keys').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async listAccounts(): Promise<AccountRecord[]> {
    const rows = await this.db.selectFrom('accounts').select(['id', 'name', 'tier', 'balance_micros', 'created_at']).orderBy('id').execute();
    return rows.map(toAccount);
  }

  async addLedgerEntry(entry: NewLedgerEntry): Promise<AccountRecord> {
    return this.db.transaction().execute(async (trx) => {
      await trx.insertInto('ledger_entries').values(ledgerRow(entry, Date.now())).execute();
      const row = await trx
        .updateTable('accounts')
        .set((eb) => ({ balance_micros: eb('balance_micros', '+', entry.amountMicros) }))
        .where('id', '=', entry.accountId)
        .where((eb) => eb.between(eb('balance_micros', '+', entry.amountMicros), -MAX_BALANCE_MICROS, MAX_BALANCE_MICROS))
        .returning(['id', 'name', 'tier', 'balance_micros', 'created_at'])
        .executeTakeFirst();
      if (row !== undefined) return toAccount(row);
      // Throwing rolls the entry back with the transaction.
      const exists = await trx.selectFrom('accounts').select('id').where('id', '=', entry.accountId).executeTakeFirst();
      throw exists === undefined ? new Error(`no account "${entry.accountId}"`) : new BalanceOutOfRangeError(entry.accountId);
    });
  }

  async commitSettlements(settlements: readonly Settlement[]): Promise<void> {
    if (settlements.length === 0) return;
    const now = Date.now();
    const onRecord = settlements.map(chargeOnRecord);
    const releases = settlements.flatMap((s) => (s.releaseReservation ? [s.requestId] : []));
    const usage = settlements.flatMap((s, i) => (s.usage === null ? [] : [usageRow(s.usage, onRecord[i] as number | null)]));
    // One row per id (a key is claimed by one request at a time, so a batch holds it once at most).
    const records = [...new Map(settlements.flatMap((s) => (s.idempotency == null ? [] : [[s.idempotency.id, idempotencyRow(s.idempotency)] as const]))).values()];
    await this.db.transaction().execute(async (trx) => {
      // In the charge's transaction: a response is recorded exactly when its charge is.
      if (records.length > 0) {
        // A key whose record expired but was not swept yet takes the new one, as does a binding; a live response stays.
        await trx
          .insertInto('idempotency_records')
          .values(records)
          .onConflict((oc) =>
            oc
              .column('id')
              .doUpdateSet((eb) => ({
                account_id: eb.ref('excluded.account_id'),
                fingerprint: eb.ref('excluded.fingerprint'),
                request_id: eb.ref('excluded.request_id'),
                status: eb.ref('excluded.status'),
                headers: eb.ref('excluded.headers'),
                body: eb.ref('excluded.body'),
                body_encoding: eb.ref('excluded.body_encoding'),
                created_at: eb.ref('excluded.created_at'),
                expires_at: eb.ref('excluded.expires_at'),
              }))
              // A binding (status 0) gives way to the key's next binding.
              .where((eb) => eb.or([eb('idempotency_records.expires_at', '<=', eb.ref('excluded.created_at')), eb('idempotency_records.status', '=', BINDING_STATUS)])),
          )
          .execute();
      }
      // Only the records and entries actually inserted move balances: a charge sent twice is charged once.
      const recorded = usage.length === 0 ? [] : await trx.insertInto('usage_records').values(usage).onConflict((oc) => oc.column('request_id').doNothing()).returning(['request_id', 'account_id', 'charge_micros']).execute();
      const charges = await this.chargesForLedger(trx, settlements, onRecord, recorded, now);
      const inserted =
        charges.length === 0
          ? []
          : await trx.insertInto('ledger_entries').values(charges).onConflict((oc) => oc.columns(['request_id', 'kind']).doNothing()).returning(['account_id', 'amount_micros']).execute();
      const released = releases.length === 0 ? [] : await trx.deleteFrom('credit_reservations').where('request_id', 'in', releases).returning(['account_id', 'amount_micros']).execute();
      const charged = perAccount([...inserted, ...recorded.flatMap((r) => (r.charge_micros === null ? [] : [{ account_id: r.account_id, amount_micros: r.charge_micros }]))]);
      const freed = perAccount(released);
      // One update per account, in the order of their ids: two instances committing batches that
      // touch the same accounts lock them in the same order, so they wait for each other instead
      // of deadlocking (PostgreSQL then aborts one, and its commits stall while it retries).
      for (const accountId of [...new Set([...charged.keys(), ...freed.keys()])].sort()) {
        const charge = charged.get(accountId) ?? 0;
        const free = freed.get(accountId) ?? 0;
        await trx
          .updateTable('accounts')
          .set((eb) => ({ balance_micros: eb('balance_micros', '+', charge), reserved_micros: eb('reserved_micros', '-', free) }))
          .where('id', '=', accountId)
          .execute();
      }
    });
  }

  /**
   * The ledger rows a batch needs: its charges that no usage record carries, and those whose
   * record was already there without its charge (written before charges moved onto records). A
   * record already carrying its charge means the settlement was committed before: no row.
   */
  private async chargesForLedger(
    trx: Transaction<Database>,
    settlements: readonly Settlement[],
    onRecord: ReadonlyArray<number | null>,
    recorded: ReadonlyArray<{ request_id: string }>,
    now: number,
  ): Promise<LedgerEntriesTable[]> {
    const inserted = new Set(recorded.map((r) => r.request_id));
    const clashed = settlements.flatMap((s, i) => (onRecord[i] !== null && !inserted.has(s.requestId) ? [s.requestId] : []));
    const uncharged =
      clashed.length === 0
        ? new Set<string>()
        : new Set((await trx.selectFrom('usage_records').select('request_id').where('request_id', 'in', clashed).where('charge_micros', 'is', null).execute()).map((r) => r.request_id));
    return settlements.flatMap((s, i) => (s.charge !== null && (onRecord[i] === null || uncharged.has(s.requestId)) ? [ledgerRow(s.charge, now)] : []));
  }

  /** Deletes reservations and gives their amounts back to their accounts. */
  private async release(trx: Transaction<Database>, requestIds: readonly string[]): Promise<number> {
    const released = await trx.deleteFrom('credit_reservations').where('request_id', 'in', requestIds).returning(['account_id', 'amount_micros']).execute();
    // In the order of the account ids, as a settlement commit updates them: no deadlock between the two.
    for (const [accountId, sum] of [...perAccount(released)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      await trx.updateTable('accounts').set((eb) => ({ reserved_micros: eb('reserved_micros', '-', sum) })).where('id', '=', accountId).execute();
    }
    return released.length;
  }

  async listLedger(accountId: string, limit: number, after?: LedgerCursor): Promise<LedgerEntry[]> {
    // Past the cursor in the order below, (created_at, id) descending: an earlier time, or the
    // same time and a lower id. Written as two conditions, the first bounds the scan of the
    // account's index by time. Each side is limited before the two are merged.
    let rows = this.db.selectFrom('ledger_entries').select(LEDGER_COLUMNS).where('account_id', '=', accountId);
    let charges = this.db
      .selectFrom('usage_records')
      .select((eb) => [
        chargeEntryIdSql(eb.ref('request_id')).as('id'),
        'account_id',
        sql<string>`${sql.lit('charge')}`.as('kind'),
        sql<number>`${eb.ref('charge_micros')}`.as('amount_micros'),
        'request_id',
        'api_key_id',
        sql<string | null>`null`.as('note'),
        'started_at as created_at',
      ])
      .where('account_id', '=', accountId)
      .where('charge_micros', 'is not', null);
    if (after !== undefined) {
      rows = rows.where('created_at', '<=', after.createdAt).where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb('id', '<', after.id)]));
      charges = charges
        .where('started_at', '<=', after.createdAt)
        .where((eb) => eb.or([eb('started_at', '<', after.createdAt), eb(chargeEntryIdSql(eb.ref('request_id')), '<', after.id)]));
    }
    const merged = await this.db
      .selectFrom(rows.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).as('entries'))
      .selectAll()
      .unionAll(this.db.selectFrom(charges.orderBy('started_at', 'desc').orderBy('id', 'desc').limit(limit).as('charges')).selectAll())
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return merged.map(toLedgerEntry);
  }

  async getLedgerEntry(id: string): Promise<LedgerEntry | undefined> {
    const requestId = requestOfChargeEntry(id);
    if (requestId !== undefined) {
      const charge = await this.chargeOnRecordOf(requestId);
      if (charge !== undefined) return charge;
    }
    const row = await this.db.selectFrom('ledger_entries').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toLedgerEntry(row);
  }

  async findLedgerEntry(requestId: string, kind: LedgerKind): Promise<LedgerEntry | undefined> {
    if (kind === 'charge') {
      const charge = await this.chargeOnRecordOf(requestId);
      if (charge !== undefined) return charge;
    }
    const row = await this.db.selectFrom('ledger_entries').selectAll().where('request_id', '=', requestId).where('kind', '=', kind).executeTakeFirst();
    return row && toLedgerEntry(row);
  }

  /** The charge a request's usage record carries, as its ledger entry. */
  private async chargeOnRecordOf(requestId: string): Promise<LedgerEntry | undefined> {
    const row = await this.db
      .selectFrom('usage_records')
      .select(['request_id', 'account_id', 'api_key_id', 'started_at', 'charge_micros'])
      .where('request_id', '=', requestId)
      .where('charge_micros', 'is not', null)
      .executeTakeFirst();
    return row === undefined || row.charge_micros === null ? undefined : chargeEntryOf({ ...row, charge_micros: row.charge_micros });
  }

  async ledgerSum(accountId: string): Promise<number> {
    const entries = await this.db.selectFrom('ledger_entries').select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount_micros'), eb.lit(0)).as('total')).where('account_id', '=', accountId).executeTakeFirst();
    const charges = await this.db.selectFrom('usage_records').select((eb) => eb.fn.coalesce(eb.fn.sum<number>('charge_micros'), eb.lit(0)).as('total')).where('account_id', '=', accountId).executeTakeFirst();
    return Number(entries?.total ?? 0) + Number(charges?.total ?? 0);
  }

  async reserveCredits(reservation: CreditReservation): Promise<ReservationResult> {
    return this.db.transaction().execute(async (trx) => {
      const held = await trx
        .updateTable('accounts')
        .set((eb) => ({ reserved_micros: eb('reserved_micros', '+', reservation.amountMicros) }))
        .where('id', '=', reservation.accountId)
        .where((eb) => eb(eb('balance_micros', '-', eb.ref('reserved_micros')), '>=', reservation.amountMicros))
        .returning(['balance_micros', 'reserved_micros'])
        .executeTakeFirst();
      if (held !== undefined) {
        await trx
          .insertInto('credit_reservations')
          .values({ request_id: reservation.requestId, account_id: reservation.accountId, amount_micros: reservation.amountMicros, expires_at: reservation.expiresAt })
          .execute();
        return { reserved: true, balanceMicros: Number(held.balance_micros), reservedMicros: Number(held.reserved_micros) - reservation.amountMicros };
      }
      const account = await trx.selectFrom('accounts').select(['balance_micros', 'reserved_micros']).where('id', '=', reservation.accountId).executeTakeFirst();
      return { reserved: false, balanceMicros: Number(account?.balance_micros ?? 0), reservedMicros: Number(account?.reserved_micros ?? 0) };
    });
  }

  async releaseExpiredReservations(now: number): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const expired = await trx.selectFrom('credit_reservations').select('request_id').where('expires_at', '<=', now).limit(1000).execute();
      return expired.length === 0 ? 0 : this.release(trx, expired.map((r) => r.request_id));
    });
  }

  async usageSummary(query: UsageQuery): Promise<UsageRow[]> {
    let q = this.db
      .selectFrom('usage_records')
      .select((eb) => [
        sql<number>`started_at / ${sql.lit(DAY_MS)}`.as('day_number'),
        'account_id',
        'api_key_id',
        'model',
        eb.fn.countAll<number>().as('requests'),
        eb.fn.sum<number>('prompt_tokens').as('prompt_tokens'),
        eb.fn.sum<number>('completion_tokens').as('completion_tokens'),
        eb.fn.sum<number>('cost_micros').as('cost_micros'),
      ]);
    if (query.accountId !== undefined) q = q.where('account_id', '=', query.accountId);
    if (query.apiKeyId !== undefined) q = q.where('api_key_id', '=', query.apiKeyId);
    if (query.model !== undefined) q = q.where('model', '=', query.model);
    if (query.from !== undefined) q = q.where('started_at', '>=', query.from);
    if (query.to !== undefined) q = q.where('started_at', '<', query.to);
    const rows = await q.groupBy([sql`started_at / ${sql.lit(DAY_MS)}`, 'account_id', 'api_key_id', 'model']).orderBy('day_number').orderBy('account_id').orderBy('api_key_id').orderBy('model').execute();
    return rows.map((r) => ({
      day: new Date(Number(r.day_number) * DAY_MS).toISOString().slice(0, 10),
      accountId: r.account_id,
      apiKeyId: r.api_key_id,
      model: r.model,
      requests: Number(r.requests),
      promptTokens: Number(r.prompt_tokens),
      completionTokens: Number(r.completion_tokens),
      costMicros: Number(r.cost_micros),
    }));
  }

  async getIdempotencyRecord(id: string, now: number): Promise<IdempotencyRecord | undefined> {
    const row = await this.db.selectFrom('idempotency_records').selectAll().where('id', '=', id).where('expires_at', '>', now).executeTakeFirst();
    return row === undefined ? undefined : idempotencyRecordOf(row);
  }

  async deleteUsageRecordsBefore(accountId: string, before: number, limit: number): Promise<number> {
    // Only records without a charge: those carrying one are the ledger's, kept like its rows. By
    // account, through the partial index of exactly those records by (account_id, started_at)
    // (started_at alone is not indexed: one index fewer to write), so the kept ones are never read.
    const old = this.db.selectFrom('usage_records').select('request_id').where('account_id', '=', accountId).where('charge_micros', 'is', null).where('started_at', '<', before).limit(limit);
    const result = await this.db.deleteFrom('usage_records').where('request_id', 'in', old).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async putStoredResponse(response: StoredResponse): Promise<void> {
    const row = storedResponseRow(response);
    await this.db
      .insertInto('stored_responses')
      .values(row)
      // A request resent under its Idempotency-Key and run again keeps one response under its id.
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          output: eb.ref('excluded.output'),
          response: eb.ref('excluded.response'),
          input: eb.ref('excluded.input'),
          previous_response_id: eb.ref('excluded.previous_response_id'),
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
        })),
      )
      .execute();
  }

  async getStoredResponses(accountId: string, ids: readonly string[], now: number): Promise<StoredResponse[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.selectFrom('stored_responses').selectAll().where('id', 'in', [...ids]).where('account_id', '=', accountId).where('expires_at', '>', now).execute();
    return rows.map(storedResponseOf);
  }

  async getStoredResponseOutputs(accountId: string, ids: readonly string[], now: number): Promise<Array<Pick<StoredResponse, 'id' | 'output'>>> {
    if (ids.length === 0) return [];
    return this.db.selectFrom('stored_responses').select(['id', 'output']).where('id', 'in', [...ids]).where('account_id', '=', accountId).where('expires_at', '>', now).execute();
  }

  async getStoredResponseChain(accountId: string, id: string, now: number, limit: number): Promise<StoredResponseTurn[]> {
    // One round trip for the whole conversation, however long: a recursive query, which SQLite
    // and PostgreSQL both run. `depth` orders it and bounds it.
    const { rows } = await sql<{ id: string; input: string | null; output: string; previous_response_id: string | null }>`
      with recursive ${chainOf(accountId, id, now, limit)}
      select s.id, s.input, s.output, s.previous_response_id from chain join stored_responses s on s.id = chain.id order by chain.depth`.execute(this.db);
    return rows.map((row) => ({ id: row.id, input: row.input, output: row.output, previousResponseId: row.previous_response_id }));
  }

  async extendStoredResponseChain(accountId: string, id: string, now: number, limit: number, expiresAt: number, staleBefore: number): Promise<number> {
    const result = await sql`
      update stored_responses set expires_at = ${expiresAt}
      where expires_at < ${staleBefore} and id in (with recursive ${chainOf(accountId, id, now, limit)} select id from chain)`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }

  async deleteStoredResponse(accountId: string, id: string, now: number): Promise<boolean> {
    const result = await this.db.deleteFrom('stored_responses').where('id', '=', id).where('account_id', '=', accountId).where('expires_at', '>', now).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async deleteExpiredStoredResponses(now: number, limit: number): Promise<number> {
    const expired = this.db.selectFrom('stored_responses').select('id').where('expires_at', '<=', now).limit(limit);
    const result = await this.db.deleteFrom('stored_responses').where('id', 'in', expired).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async deleteExpiredIdempotencyRecords(now: number, limit: number): Promise<number> {
    const expired = this.db.selectFrom('idempotency_records').select('id').where('expires_at', '<=', now).limit(limit);
    // The expiry is checked again outside the subquery: a record a new request wrote over the
    // expired one meanwhile keeps its id, and PostgreSQL re-checks only the outer condition on a
    // row changed under the delete, which would otherwise remove the fresh record.
    const result = await this.db.deleteFrom('idempotency_records').where('id', 'in', expired).where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async putAsset(asset: AssetRecord): Promise<void> {
    await this.db
      .insertInto('assets')
      .values({ id: asset.id, account_id: asset.accountId, blob_id: asset.blobId, content_type: asset.contentType, bytes: asset.bytes, request_id: asset.requestId, created_at: asset.createdAt })
      .execute();
  }

  async getAsset(id: string): Promise<AssetRecord | undefined> {
    const row = await this.db.selectFrom('assets').selectAll().where('id', '=', id).executeTakeFirst();
    if (row === undefined) return undefined;
    return { id: row.id, accountId: row.account_id, blobId: row.blob_id, contentType: row.content_type, bytes: Number(row.bytes), requestId: row.request_id, createdAt: Number(row.created_at) };
  }

  async deleteAssetsCreatedBefore(before: number, limit: number): Promise<string[]> {
    const old = this.db.selectFrom('assets').select('id').where('created_at', '<', before).limit(limit);
    const deleted = await this.db.deleteFrom('assets').where('id', 'in', old).returning('blob_id').execute();
    return deleted.map((row) => row.blob_id);
  }

  async deleteAsset(id: string): Promise<string | undefined> {
    const deleted = await this.db.deleteFrom('assets').where('id', '=', id).returning('blob_id').executeTakeFirst();
    return deleted?.blob_id;
  }

  async putFile(file: FileRecord): Promise<void> {
    await this.db.insertInto('files').values(fileRow(file)).execute();
  }

  async getFile(id: string): Promise<FileRecord | undefined> {
    const row = await this.db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : fileOf(row);
  }

  async listFiles(accountId: string, page: ListPage, now: number, purpose?: string): Promise<FileRecord[]> {
    // Expired files are swept only now and then; until then they are gone for every other read.
    return (await listPage(this.db, 'files', accountId, page, (query) => (purpose === undefined ? query : query.where('purpose', '=', purpose)).where('expires_at', '>', now))).map(fileOf);
  }

  async deleteFile(id: string): Promise<string | undefined> {
    const deleted = await this.db.deleteFrom('files').where('id', '=', id).returning('blob_id').executeTakeFirst();
    return deleted?.blob_id;
  }

  async deleteExpiredFiles(now: number, limit: number): Promise<string[]> {
    const expired = this.db.selectFrom('files').select('id').where('expires_at', '<=', now).limit(limit);
    const deleted = await this.db.deleteFrom('files').where('id', 'in', expired).returning('blob_id').execute();
    return deleted.map((row) => row.blob_id);
  }

  async putVideoJob(job: VideoJobRecord): Promise<void> {
    await this.db.insertInto('video_jobs').values(videoJobRow(job)).execute();
  }

  async getVideoJob(id: string): Promise<VideoJobRecord | undefined> {
    const row = await this.db.selectFrom('video_jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : videoJobOf(row);
  }

  async listVideoJobs(accountId: string, page: ListPage): Promise<VideoJobRecord[]> {
    return (await listPage(this.db, 'video_jobs', accountId, page)).map(videoJobOf);
  }

  async updateVideoJob(id: string, changes: VideoJobChanges, ifStatus: readonly VideoJobStatus[], options: { ifLeaseOwner?: string; refund?: NewLedgerEntry } = {}): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      let query = trx.updateTable('video_jobs').set(videoJobUpdate(changes)).where('id', '=', id).where('status', 'in', [...ifStatus]);
      if (options.ifLeaseOwner !== undefined) query = query.where('lease_owner', '=', options.ifLeaseOwner);
      const result = await query.executeTakeFirst();
      const updated = Number(result.numUpdatedRows) > 0;
      if (updated && options.refund !== undefined) {
        const refund = options.refund;
        await trx.insertInto('ledger_entries').values(ledgerRow(refund, Date.now())).execute();
        await trx.updateTable('accounts').set((eb) => ({ balance_micros: eb('balance_micros', '+', refund.amountMicros) })).where('id', '=', refund.accountId).execute();
      }
      return updated;
    });
  }

  async leaseDueVideoJobs(owner: string, now: number, leaseMs: number, limit: number): Promise<VideoJobRecord[]> {
    const free = (eb: ExpressionBuilder<Database, 'video_jobs'>) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]);
    const due = this.db
      .selectFrom('video_jobs')
      .select('id')
      .where('status', 'in', ['queued', 'in_progress'])
      .where('next_poll_at', '<=', now)
      .where(free)
      .orderBy('next_poll_at')
      .limit(limit);
    // The lease condition is repeated outside the subquery: PostgreSQL re-checks it on a row
    // another instance leased meanwhile, so that only one of them gets each job.
    const rows = await this.db
      .updateTable('video_jobs')
      .set({ lease_owner: owner, lease_until: now + leaseMs })
      .where('id', 'in', due)
      .where('status', 'in', ['queued', 'in_progress'])
      .where(free)
      .returningAll()
      .execute();
    return rows.map(videoJobOf);
  }

  async deleteVideoJob(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('video_jobs').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}

/** The recursive part of a conversation's query: `chain` (id, previous_response_id, depth), newest first. */
function chainOf(accountId: string, id: string, now: number, limit: number) {
  return sql`chain (id, previous_response_id, depth) as (
    select id, previous_response_id, 0 from stored_responses
      where id = ${id} and account_id = ${accountId} and expires_at > ${now}
    union all
    select s.id, s.previous_response_id, chain.depth + 1 from stored_responses s join chain on s.id = chain.previous_response_id
      where s.account_id = ${accountId} and s.expires_at > ${now} and chain.depth + 1 < ${limit}
  )`;
}

function storedResponseRow(response: StoredResponse): Database['stored_responses'] {
  return {
    id: response.id,
    account_id: response.accountId,
    output: response.output,
    response: response.response,
    input: response.input,
    previous_response_id: response.previousResponseId,
    created_at: response.createdAt,
    expires_at: response.expiresAt,
  };
}

function storedResponseOf(row: Selectable<Database['stored_responses']>): StoredResponse {
  return {
    id: row.id,
    accountId: row.account_id,
    output: row.output,
    response: row.response,
    input: row.input,
    previousResponseId: row.previous_response_id,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}
