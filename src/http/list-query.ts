/** The query of OpenAI-style list endpoints: `after` (a cursor id), `limit`, `order`. */
import { GatewayError } from '../errors/index.js';
import type { ListPage } from '../storage/types.js';

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 100;
// eslint-disable-next-line no-control-regex -- control characters are exactly what it looks for
const CONTROL = /[\u0000-\u001f\u007f]/;

/** `maxLimit`: the largest page the endpoint serves (OpenAI's files list takes up to 10,000). */
export function listPageOf(query: unknown, maxLimit = MAX_LIST_LIMIT): ListPage {
  const q = (query ?? {}) as Record<string, unknown>;
  const limitText = q.limit;
  const limit = limitText === undefined ? DEFAULT_LIST_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) {
    throw new GatewayError('invalid_parameter', `limit must be an integer from 1 to ${maxLimit}, got ${String(limitText).slice(0, 40)}.`, { param: 'limit' });
  }
  const order = q.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new GatewayError('invalid_parameter', `order must be "asc" or "desc", got ${JSON.stringify(order)?.slice(0, 40) ?? 'nothing'}.`, { param: 'order' });
  // No id holds a control character, and PostgreSQL refuses a NUL in a text parameter outright (a 500 had it reached the query).
  if (q.after !== undefined && (typeof q.after !== 'string' || CONTROL.test(q.after))) throw new GatewayError('invalid_parameter', 'after must be one id.', { param: 'after' });
  return { limit, order, ...(q.after === undefined || q.after === '' ? {} : { after: q.after }) };
}

/** One page in OpenAI's list shape; one more item than the limit was fetched to know `has_more`. */
export function listBody<T extends { id: string }>(items: readonly T[], limit: number): string {
  const data = items.slice(0, limit);
  return JSON.stringify({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: items.length > limit });
}
