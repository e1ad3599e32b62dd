/**
 * GET /v1/responses/{id}/input_items: the items a kept response was generated from, in the shape
 * OpenAI lists them. With `previous_response_id` that is the whole conversation before it (each
 * earlier response's input and output) and then its own input, as the model was sent it.
 *
 * Items are kept as the caller sent them, so many have no id (a message given as
 * `{role, content}`); each gets one from its response's digits and its place in that response's
 * input (`msg_<digits>_in<n>`), the same at every read, so that `after` pages through them. Such
 * ids name no output item: an `item_reference` to one is refused like any unknown item.
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

/** Every item of the conversation, oldest first, each with an id unique in the list. */
export function conversationItems(turns: readonly ConversationTurn[]): Item[] {
  const items: Item[] = [];
  const seen = new Set<string>();
  for (const turn of turns) {
    const digits = turn.responseId.slice('resp_'.length);
    turn.input.forEach((given, n) => {
      const item = listedItem(given);
      const type = typeof item.type === 'string' ? item.type : 'message';
      const own = typeof item.id === 'string' && item.id !== '' && !seen.has(item.id) ? item.id : undefined;
      // A caller's id that repeats an earlier one (the same item sent again) is replaced: a cursor must name one place.
      const id = own ?? `${PREFIX[type] ?? 'item'}_${digits}_in${n}`;
      seen.add(id);
      items.push({ ...item, id });
    });
    for (const given of turn.output) {
      if (!isObject(given) || typeof given.id !== 'string') continue;
      seen.add(given.id);
      items.push(given as Item);
    }
  }
  return items;
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
