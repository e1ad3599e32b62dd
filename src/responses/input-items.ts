/**
 * GET /v1/responses/{id}/input_items: the items a kept response was generated from, in the shape
 * OpenAI lists them. With `previous_response_id` that is the whole conversation before it (each
 * earlier response's input and output) and then its own input, as the model was sent it.
 *
 * Items are kept as the caller sent them, so many have no id (a message given as
 * `{role, content}`); each gets one from its response's digits and its place in that response's
 * input (`msg_<digits>_in<n>`), so that `after` pages through them. Such ids name no output item:
 * an `item_reference` to one is refused like any unknown item.
 *
 * A cursor must name one place, at every read: an item's id may not depend on whether an earlier
 * response is still kept. So a caller's own id is kept only when it is not shaped like Tollgate's
 * (an output item of an earlier response handed back, which that response may list too) and no
 * later item has it; the rest get the id of their place.
 */
import { GatewayError } from '../errors/index.js';
import type { ListPage } from '../storage/types.js';

/** One response of the conversation, oldest first: its input as kept, and its output unless it is the one listed. */
export interface ConversationTurn {
  readonly responseId: string;
  readonly input: readonly unknown[];
  readonly output: readonly unknown[];
}

type Item = Record<string, unknown> & { id: string };

const PREFIX: Record<string, string> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', reasoning: 'rs' };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Ids Tollgate makes for items: output items (msg_<32 hex>, fc_<32 hex>_<n>) and the ids of places above. */
const OWN_SHAPE = /^[a-z]+_[0-9a-f]{32}(?:_(?:in)?\d+)?$/;

/** Every item of the conversation, oldest first, each with an id unique in the list. */
export function conversationItems(turns: readonly ConversationTurn[]): Item[] {
  const items: Item[] = [];
  // Newest first, so that whether an id is taken never depends on the older turns, which a deleted response removes.
  const taken = new Set<string>();
  for (let t = turns.length - 1; t >= 0; t--) {
    const turn = turns[t] as ConversationTurn;
    const digits = turn.responseId.slice('resp_'.length);
    // Built backwards, as the whole list is: reversed at the end.
    const run: Item[] = [];
    for (let o = turn.output.length - 1; o >= 0; o--) {
      const given = turn.output[o];
      if (!isObject(given) || typeof given.id !== 'string') continue;
      // Responses kept before message items had ids of their own repeat one: a page's `after`
      // must name one place, or a client paging through would get the same page forever.
      let id = given.id;
      for (let n = o; taken.has(id); n += turn.output.length) id = `${given.id}_${n}`;
      taken.add(id);
      run.push(id === given.id ? (given as Item) : { ...(given as Item), id });
    }
    for (let n = turn.input.length - 1; n >= 0; n--) {
      const item = listedItem(turn.input[n]);
      const type = typeof item.type === 'string' ? item.type : 'message';
      const own = typeof item.id === 'string' && item.id !== '' && !OWN_SHAPE.test(item.id) && !taken.has(item.id) ? item.id : undefined;
      const id = own ?? `${Object.hasOwn(PREFIX, type) ? PREFIX[type] : 'item'}_${digits}_in${n}`;
      taken.add(id);
      run.push({ ...item, id });
    }
    items.push(...run);
  }
  return items.reverse();
}

/** An input item as OpenAI lists it: a message's text as a content part, a status on every item. */
function listedItem(given: unknown): Record<string, unknown> {
  if (!isObject(given)) return { type: 'message', role: 'user', status: 'completed', content: [] };
  const type = given.type ?? 'message';
  if (type !== 'message') return { status: 'completed', ...given };
  const role = given.role;
  const content = typeof given.content === 'string' ? [role === 'assistant' ? { type: 'output_text', text: given.content, annotations: [] } : { type: 'input_text', text: given.content }] : given.content;
  const { id } = given;
  return { ...(typeof id === 'string' ? { id } : {}), type: 'message', role, status: 'completed', content };
}

/** One page of the items in OpenAI's list shape; `after` must name one of them. */
export function itemsPage(items: readonly Item[], page: ListPage): string {
  const ordered = page.order === 'asc' ? items : [...items].reverse();
  let start = 0;
  if (page.after !== undefined) {
    const at = ordered.findIndex((item) => item.id === page.after);
    if (at < 0) throw new GatewayError('invalid_parameter', `after: no item "${page.after.slice(0, 80)}" among the input items of this response.`, { param: 'after' });
    start = at + 1;
  }
  const data = ordered.slice(start, start + page.limit);
  return JSON.stringify({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + page.limit < ordered.length });
}
