/**
 * Whether a failed write was refused for what it holds (a value the schema cannot keep, a row a
 * constraint forbids), so that writing it again will always fail, as opposed to a store that
 * cannot write now (down, full, read-only after a failover, a lock held too long) and will take
 * the same write later. Only the first kind may be set aside: the second must wait.
 */

/** PostgreSQL's SQLSTATE classes of the first kind: 22 data exception, 23 integrity constraint violation. */
const POSTGRES_REFUSALS = /^2[23][0-9A-Z]{3}$/;
/** SQLite's result codes of the first kind (better-sqlite3 puts the extended code in `code`). */
const SQLITE_REFUSALS = /^SQLITE_(?:CONSTRAINT|TOOBIG|MISMATCH|RANGE)(?:_|$)/;

export function isRefusedWrite(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return POSTGRES_REFUSALS.test(code) || SQLITE_REFUSALS.test(code);
}
