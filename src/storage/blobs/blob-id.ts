/**
 * Blob ids are made here and nowhere else. Backends use an id as a file name or a key, so every
 * id a caller hands back is checked against the exact shape we generate: nothing else (`..`,
 * slashes, a `.json` suffix) can ever reach the file system or a query.
 */
import { randomBytes } from 'node:crypto';

const BLOB_ID = /^blob_[0-9a-f]{24}$/;

export function newBlobId(): string {
  return `blob_${randomBytes(12).toString('hex')}`;
}

export function isBlobId(value: string): boolean {
  return BLOB_ID.test(value);
}
