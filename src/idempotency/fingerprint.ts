/**
 * What makes two requests "the same" for an Idempotency-Key: method, path and body, the body as
 * canonical JSON (object keys sorted, no white space), so that key order and formatting do not
 * matter but every value does.
 */
import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method.toUpperCase()} ${path}\n`).update(canonicalJson(body)).digest('hex');
}

/**
 * The id of a key's binding (a request that left nothing to replay): apart from the record's own
 * id, so that an instance of an earlier version, which knows no bindings, never reads one as a
 * response to replay.
 */
export function bindingRecordId(recordId: string): string {
  return createHash('sha256').update('binding\n').update(recordId).digest('hex');
}

/** The record's id: the account and the key, so that two accounts' keys never meet. */
export function idempotencyRecordId(accountId: string, key: string): string {
  return createHash('sha256').update(accountId).update('\n').update(key).digest('hex');
}
