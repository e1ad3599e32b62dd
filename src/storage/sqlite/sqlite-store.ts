/**
 * The SQLite store: the shared SQL store, except for the commit of settlements, which runs on
 * every charged request and is written here as prepared statements in one synchronous
 * transaction. Through the query layer the same commit cost several times more CPU, most of it
 * building and compiling queries (bench/billing.bench.ts); the statements below do exactly what
 * SqlStore.commitSettlements does, and both run the same conformance suite.
 */
import type SQLite from 'better-sqlite3';
import { SqlStore, newLedgerId } from '../sql/sql-store.js';
import { BINDING_STATUS, type Settlement } from '../types.js';
import { idempotencyRow } from '../sql/idempotency-rows.js';
import { chargeOnRecord } from '../sql/usage-charges.js';
import type { Checkpointer } from './checkpointer.js';
import type { OpenedSqlite } from './open-sqlite.js';

interface HeldCommit {
  settlements: readonly Settlement[];
  resolve: () => void;
  reject: (err: Error) => void;
}

export class SqliteStore extends SqlStore {
  private readonly commitBatch: (settlements: readonly Settlement[]) => void;
  /** Commits held while the checkpointer truncates the write-ahead log; null when not paused. */
  private held: HeldCommit[] | null = null;

  private readonly checkpointer: Checkpointer | null;

  private readonly lock: OpenedSqlite['lock'];

  constructor({ db, sqlite, checkpointer, gate, lock }: OpenedSqlite) {
    super(db);
    this.checkpointer = checkpointer;
    this.lock = lock;
    // Prepared lazily: the tables exist only once migrations have run.
    let prepared: ((settlements: readonly Settlement[]) => void) | undefined;
    this.commitBatch = (settlements) => {
      prepared ??= prepareCommit(sqlite);
      prepared(settlements);
    };
    // While the log is started over, the commits below are held here and the query layer's
    // statements wait at the gate; at its end the held commits go first, in order.
    checkpointer?.attach({
      pause: () => {
        this.held ??= [];
        gate.close();
      },
      resume: () => {
        this.commitHeld();
        gate.open();
      },
    });
  }

  override async close(): Promise<void> {
    await this.checkpointer?.stop();
    await super.close();
    this.lock?.close();
  }

  /**
   * Runs on the shared connection without the query layer's lock. That is safe only because every
   * transaction the query layer runs here (SqlStore's) awaits nothing but its own statements, which
   * better-sqlite3 answers synchronously: it ends within one turn of the event loop, before any
   * commit can start. A store transaction that awaited anything else (a timer, a file, a network
   * call) would let this commit run inside it, as a savepoint that its rollback would undo.
   */
  override commitSettlements(settlements: readonly Settlement[]): Promise<void> {
    if (this.held !== null) {
      const held = this.held;
      return new Promise((resolve, reject) => held.push({ settlements, resolve, reject }));
    }
    try {
      this.commitBatch(settlements);
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(asError(err));
    }
  }

  /** Commits what was held, in order, now that the log is truncated. */
  private commitHeld(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const commit of held) {
      try {
        this.commitBatch(commit.settlements);
        commit.resolve();
      } catch (err) {
        commit.reject(asError(err));
      }
    }
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

function prepareCommit(sqlite: SQLite.Database): (settlements: readonly Settlement[]) => void {
  const insertCharge = sqlite.prepare(
    'insert into ledger_entries (id, account_id, kind, amount_micros, request_id, api_key_id, note, created_at) values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (request_id, kind) do nothing',
  );
  const moveBalance = sqlite.prepare('update accounts set balance_micros = balance_micros + ? where id = ?');
  const release = sqlite.prepare('delete from credit_reservations where request_id = ? returning account_id, amount_micros');
  const moveReserved = sqlite.prepare('update accounts set reserved_micros = reserved_micros - ? where id = ?');
  const insertUsage = sqlite.prepare(
    'insert into usage_records (request_id, account_id, api_key_id, model, provider, upstream_model, modality, prompt_tokens, completion_tokens, cost_micros, status, latency_ms, started_at, ended_at, charge_micros) ' +
      'values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (request_id) do nothing',
  );
  const uncharged = sqlite.prepare('select 1 from usage_records where request_id = ? and charge_micros is null').pluck();
  const insertRecord = sqlite.prepare(
    'insert into idempotency_records (id, account_id, fingerprint, request_id, status, headers, body, body_encoding, created_at, expires_at) ' +
      'values (@id, @account_id, @fingerprint, @request_id, @status, @headers, @body, @body_encoding, @created_at, @expires_at) ' +
      // A key whose record expired but was not swept yet takes the new one; so does a binding (status 0).
      'on conflict (id) do update set account_id = excluded.account_id, fingerprint = excluded.fingerprint, request_id = excluded.request_id, status = excluded.status, ' +
      'headers = excluded.headers, body = excluded.body, body_encoding = excluded.body_encoding, created_at = excluded.created_at, expires_at = excluded.expires_at ' +
      'where idempotency_records.expires_at <= excluded.created_at or idempotency_records.status = ' + String(BINDING_STATUS),
  );
  // Each account's balance moves once per commit by the sum of its charges, not once per charge:
  // the update cost about a tenth of a charged request's commit (callgrind, 20 requests a commit).
  const moves = new Map<string, number>();
  return sqlite.transaction((settlements: readonly Settlement[]) => {
    const now = Date.now();
    moves.clear();
    const move = (accountId: string, micros: number): void => {
      moves.set(accountId, (moves.get(accountId) ?? 0) + micros);
    };
    for (const settlement of settlements) {
      const { requestId, charge, releaseReservation, usage, idempotency } = settlement;
      if (idempotency != null) insertRecord.run(idempotencyRow(idempotency));
      // Only what is actually inserted moves the balance: a settlement sent twice charges once.
      const onRecord = chargeOnRecord(settlement);
      let ledgerCharge = onRecord === null ? charge : null;
      if (usage !== null) {
        const added =
          insertUsage.run(
            usage.requestId, usage.accountId, usage.apiKeyId, usage.model, usage.provider, usage.upstreamModel, usage.modality,
            usage.promptTokens, usage.completionTokens, usage.costMicros, usage.status, Math.round(usage.latencyMs), usage.startedAt, usage.endedAt, onRecord,
          ).changes > 0;
        if (onRecord !== null) {
          if (added) move(usage.accountId, onRecord);
          // A record already there without its charge (written before charges moved onto records): the charge gets a ledger row.
          else if (uncharged.get(usage.requestId) !== undefined) ledgerCharge = charge;
        }
      }
      if (ledgerCharge !== null && insertCharge.run(newLedgerId(), ledgerCharge.accountId, ledgerCharge.kind, ledgerCharge.amountMicros, ledgerCharge.requestId, ledgerCharge.apiKeyId, ledgerCharge.note, now).changes > 0) {
        move(ledgerCharge.accountId, ledgerCharge.amountMicros);
      }
      if (releaseReservation) {
        for (const row of release.all(requestId) as Array<{ account_id: string; amount_micros: number }>) moveReserved.run(row.amount_micros, row.account_id);
      }
    }
    for (const [accountId, micros] of moves) moveBalance.run(micros, accountId);
  });
}
