/**
 * Cursor pages over an account's rows ordered by (created_at, id): the cursor is the id of the
 * last item the caller saw, as OpenAI's list endpoints take it (`after`). A cursor that is not
 * the account's gives an empty page rather than another account's rows. A cursor whose row was
 * deleted (a client deleting each item of a page before asking for the next) still places the
 * page: the id carries its row's creation time (orderedHexAt).
 */
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Database } from './database.js';
import type { ListPage } from '../types.js';
import { timeOfOrderedHex } from '../../util/ordered-id.js';

type PagedTable = 'files' | 'video_jobs';
type FileQuery = SelectQueryBuilder<Database, 'files', Database['files']>;

export async function listPage<T extends PagedTable>(
  db: Kysely<Database>,
  table: T,
  accountId: string,
  page: ListPage,
  /** A further condition on the rows listed (not on the cursor's row). */
  only: (query: FileQuery) => FileQuery = (query) => query,
): Promise<Array<Database[T]>> {
  // One table at a time keeps kysely's types simple; both tables have the columns used here.
  const from = db.selectFrom(table as 'files');
  let query = only(from.selectAll().where('account_id', '=', accountId));
  if (page.after !== undefined) {
    const after = page.after;
    const at = await cursorTime(db, table, accountId, after);
    if (at === undefined) return [];
    query =
      page.order === 'asc'
        ? query.where((eb) => eb.or([eb('created_at', '>', at), eb.and([eb('created_at', '=', at), eb('id', '>', after)])]))
        : query.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', after)])]));
  }
  const rows = await query.orderBy('created_at', page.order).orderBy('id', page.order).limit(page.limit).execute();
  return rows as unknown as Array<Database[T]>;
}

/** Where the cursor's row is (or was) in the list: its creation time. */
async function cursorTime(db: Kysely<Database>, table: PagedTable, accountId: string, id: string): Promise<number | undefined> {
  const row = await db.selectFrom(table as 'files').select(['created_at', 'account_id']).where('id', '=', id).executeTakeFirst();
  if (row !== undefined) return row.account_id === accountId ? Number(row.created_at) : undefined;
  return timeOfOrderedHex(id.slice(id.search(/[0-9a-f]{24}$/)));
}
