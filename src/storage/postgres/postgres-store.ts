/**
 * The PostgreSQL store: the shared SQL store, except for credit reservations, which every priced
 * request makes before its upstream call. Here one statement reserves and records the
 * reservation (data-modifying CTEs, which SQLite lacks), on a pool whose commits do not wait for
 * the disk: one round trip instead of a five-statement transaction (bench/billing.bench.ts).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../sql/database.js';
import { SqlStore } from '../sql/sql-store.js';
import type { CreditReservation, ReservationResult } from '../types.js';

interface ReservationRow {
  reserved: boolean;
  balance_micros: number | string;
  reserved_micros: number | string;
}

export class PostgresStore extends SqlStore {
  constructor(
    db: Kysely<Database>,
    private readonly fastDb: Kysely<Database>,
    schema: string | undefined,
  ) {
    super(db, schema);
  }

  override async reserveCredits(r: CreditReservation): Promise<ReservationResult> {
    // Every branch reads the statement's one snapshot: `reserved_micros` in the second branch is
    // what other requests hold, and it is only used when nothing was reserved.
    const { rows } = await sql<ReservationRow>`
      with held as (
        update accounts set reserved_micros = reserved_micros + ${r.amountMicros}
        where id = ${r.accountId} and balance_micros - reserved_micros >= ${r.amountMicros}
        returning balance_micros, reserved_micros - ${r.amountMicros} as reserved_micros
      ), recorded as (
        insert into credit_reservations (request_id, account_id, amount_micros, expires_at)
        select ${r.requestId}, ${r.accountId}, ${r.amountMicros}, ${r.expiresAt} from held
      )
      select true as reserved, balance_micros, reserved_micros from held
      union all
      select false, balance_micros, reserved_micros from accounts where id = ${r.accountId} and not exists (select 1 from held)
    `.execute(this.fastDb);
    const row = rows[0];
    if (row === undefined) return { reserved: false, balanceMicros: 0, reservedMicros: 0 };
    return { reserved: row.reserved, balanceMicros: Number(row.balance_micros), reservedMicros: Number(row.reserved_micros) };
  }

  override async close(): Promise<void> {
    await this.fastDb.destroy();
    await super.close();
  }
}
