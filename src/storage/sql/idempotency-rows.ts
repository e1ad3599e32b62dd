/**
 * Idempotency records as table rows. Bodies are kept as text so that one column type serves
 * SQLite and PostgreSQL: UTF-8 as they were (JSON and event streams), base64 when they are
 * binary or hold a NUL byte (which PostgreSQL text refuses).
 */
import { isUtf8 } from 'node:buffer';
import type { Selectable } from 'kysely';
import type { IdempotencyRecordsTable } from './database.js';
import type { IdempotencyRecord } from '../types.js';

export function idempotencyRow(record: IdempotencyRecord): IdempotencyRecordsTable {
  const text = isUtf8(record.body) && !record.body.includes(0);
  return {
    id: record.id,
    account_id: record.accountId,
    fingerprint: record.fingerprint,
    request_id: record.requestId,
    status: record.status,
    headers: JSON.stringify(record.headers),
    body: record.body.toString(text ? 'utf8' : 'base64'),
    body_encoding: text ? 'utf8' : 'base64',
    created_at: record.createdAt,
    expires_at: record.expiresAt,
  };
}

export function idempotencyRecordOf(row: Selectable<IdempotencyRecordsTable>): IdempotencyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    fingerprint: row.fingerprint,
    requestId: row.request_id,
    status: Number(row.status),
    headers: JSON.parse(row.headers) as Record<string, string>,
    body: Buffer.from(row.body, row.body_encoding === 'base64' ? 'base64' : 'utf8'),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}
