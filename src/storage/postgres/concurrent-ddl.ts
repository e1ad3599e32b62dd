/**
 * PostgreSQL's `create … if not exists` is not safe against itself: two instances starting at once
 * on a fresh database both find the object missing, and the loser fails on the catalogue's unique
 * index (23505), or with "already exists" (42P06 for a schema, 42P07 for a table or index, 42710
 * for the row type a table brings: `type "blobs" already exists`). Either way the object is there,
 * made by the other, which is all the statement asked for.
 */
const ALREADY_THERE = new Set(['23505', '42P06', '42P07', '42710']);

/** Runs a `create … if not exists` statement, taking a concurrent creation by another session as success. */
export async function createIfMissing(statement: () => Promise<unknown>): Promise<void> {
  try {
    await statement();
  } catch (err) {
    if (!ALREADY_THERE.has((err as { code?: unknown } | null)?.code as string)) throw err;
  }
}
