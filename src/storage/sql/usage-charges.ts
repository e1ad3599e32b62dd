/**
 * A gateway request's charge is kept on its usage record (column `charge_micros`) rather than in a
 * ledger row of its own. The two were always committed together, and writing both cost eight
 * B-tree inserts a charged request (the ledger row with its three indexes, the usage record with
 * its three): the largest single cost of a request on SQLite. The record now carries the charge,
 * so a charged request writes four, and the ledger reads these charges from the usage records:
 * each such charge is shown as a ledger entry whose id is derived from its request's id, dated by
 * the request's start (the usage records' index is by account and start). Usage retention keeps
 * these records, as the ledger keeps its rows.
 *
 * Only a plain charge of a gateway request qualifies (kind `charge`, no note, the record's
 * request, account and key): refunds, top-ups and anything else stay ledger rows. A record
 * written before this (or without its charge) keeps its charge, if any, in a ledger row.
 */
import { sql, type Expression, type RawBuilder } from 'kysely';
import type { LedgerEntry, Settlement } from '../types.js';
import type { UsageRecordsTable } from './database.js';

const GATEWAY_REQUEST_ID = /^req_[0-9a-f]{32}$/;
const REQUEST_PREFIX = 'req_';
const ENTRY_PREFIX = 'le_';

/** The charge a settlement's usage record can carry, or null when it needs a ledger row. */
export function chargeOnRecord(settlement: Settlement): number | null {
  const { charge, usage } = settlement;
  if (charge === null || usage === null || charge.kind !== 'charge' || charge.note !== null) return null;
  if (charge.requestId !== usage.requestId || settlement.requestId !== usage.requestId || charge.accountId !== usage.accountId || charge.apiKeyId !== usage.apiKeyId) return null;
  return GATEWAY_REQUEST_ID.test(usage.requestId) ? charge.amountMicros : null;
}

/**
 * The ledger id of a charge kept on a usage record: `le_` and the request id's 32 hex digits, the
 * shape of every ledger id (a ledger row's are time, sequence and randomness: no clash).
 */
export function chargeEntryId(requestId: string): string {
  return ENTRY_PREFIX + requestId.slice(REQUEST_PREFIX.length);
}

/** chargeEntryId in SQL, the same on SQLite and PostgreSQL, for the ledger's order and its cursor. */
export function chargeEntryIdSql(requestId: Expression<string>): RawBuilder<string> {
  return sql<string>`${sql.lit(ENTRY_PREFIX)} || substr(${requestId}, ${sql.lit(REQUEST_PREFIX.length + 1)})`;
}

/** The request whose usage record may carry the charge of ledger id `id`, if the id can be one. */
export function requestOfChargeEntry(id: string): string | undefined {
  const requestId = REQUEST_PREFIX + id.slice(ENTRY_PREFIX.length);
  return id.startsWith(ENTRY_PREFIX) && GATEWAY_REQUEST_ID.test(requestId) ? requestId : undefined;
}

/** A usage record's charge as the ledger entry it stands for. */
export function chargeEntryOf(row: Pick<UsageRecordsTable, 'request_id' | 'account_id' | 'api_key_id' | 'started_at'> & { charge_micros: number | string }): LedgerEntry {
  return {
    id: chargeEntryId(row.request_id),
    accountId: row.account_id,
    kind: 'charge',
    amountMicros: Number(row.charge_micros),
    requestId: row.request_id,
    apiKeyId: row.api_key_id,
    note: null,
    createdAt: Number(row.started_at),
  };
}
