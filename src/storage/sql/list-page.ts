/**
 * Cursor pages over an account's rows ordered by (created_at, id): the cursor is the id of the
 * last item the caller saw, as OpenAI's list endpoints take it (`after`). A cursor that is not
 * the account's gives an empty page rather than another account's rows.
 */
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Database } from './database.js';
import type { ListPage } from '../types.js';

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
    const cursor = await db.selectFrom(table as 'files').select('created_at').where('id', '=', page.after).where('account_id', '=', accountId).executeTakeFirst();
    if (cursor === undefined) return [];
    const at = Number(cursor.created_at);
    const after = page.after;
    query =
      page.order === 'asc'
        ? query.where((eb) => eb.or([eb('created_at', '>', at), eb.and([eb('created_at', '=', at), eb('id', '>', after)])]))
        : query.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', after)])]));
  }
  const rows = await query.orderBy('created_at', page.order).orderBy('id', page.order).limit(page.limit).execute();
  return rows as unknown as Array<Database[T]>;
}
