/** Uploaded files as table rows. */
import type { Selectable } from 'kysely';
import type { FilesTable } from './database.js';
import type { FileRecord } from '../types.js';

export function fileRow(file: FileRecord): FilesTable {
  return {
    id: file.id,
    account_id: file.accountId,
    blob_id: file.blobId,
    filename: file.filename,
    purpose: file.purpose,
    content_type: file.contentType,
    bytes: file.bytes,
    created_at: file.createdAt,
    expires_at: file.expiresAt,
  };
}

export function fileOf(row: Selectable<FilesTable>): FileRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    blobId: row.blob_id,
    filename: row.filename,
    purpose: row.purpose,
    contentType: row.content_type,
    bytes: Number(row.bytes),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}
