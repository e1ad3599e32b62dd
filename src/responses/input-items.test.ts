import { describe, expect, it } from 'vitest';
import { conversationItems, itemsPage } from './input-items.js';

const one = 'resp_00000000000000000000000000000001';
const two = 'resp_00000000000000000000000000000002';

describe('conversationItems', () => {
  it('lists each response\u2019s input, then its output, giving every item an id that stays the same', () => {
    const turns = [
      { responseId: one, input: [{ role: 'user', content: 'Weather?' }], output: [{ type: 'function_call', id: `fc_${one.slice(5)}_0`, call_id: 'call_1', name: 'w', arguments: '{}', status: 'completed' }] },
      {
        responseId: two,
        input: [
          { type: 'function_call_output', call_id: 'call_1', output: 'Sunny' },
          { type: 'reasoning', id: 'rs_given', summary: [] },
          { role: 'assistant', content: 'Noted.' },
        ],
        output: [],
      },
    ];
    const items = conversationItems(turns);
    expect(items).toEqual([
      { id: 'msg_00000000000000000000000000000001_in0', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'Weather?' }] },
      turns[0]?.output[0],
      { id: 'fco_00000000000000000000000000000002_in0', type: 'function_call_output', call_id: 'call_1', output: 'Sunny', status: 'completed' },
      { id: 'rs_given', type: 'reasoning', summary: [], status: 'completed' },
      { id: 'msg_00000000000000000000000000000002_in2', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Noted.', annotations: [] }] },
    ]);
    expect(conversationItems(turns)).toEqual(items);
  });

  it('keeps a caller\u2019s id unless an earlier item has it already', () => {
    const input = [{ id: 'msg_mine', role: 'user', content: 'a' }, { id: 'msg_mine', role: 'user', content: 'a' }];
    expect(conversationItems([{ responseId: one, input, output: [] }]).map((item) => item.id)).toEqual(['msg_mine', 'msg_00000000000000000000000000000001_in1']);
  });
});

describe('itemsPage', () => {
  const items = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id }));
  const ids = (text: string) => (JSON.parse(text) as { data: Array<{ id: string }>; has_more: boolean }).data.map((item) => item.id);

  it('pages newest first or oldest first from after the given item', () => {
    expect(ids(itemsPage(items, { limit: 2, order: 'desc' }))).toEqual(['e', 'd']);
    expect(ids(itemsPage(items, { limit: 2, order: 'desc', after: 'd' }))).toEqual(['c', 'b']);
    expect(JSON.parse(itemsPage(items, { limit: 2, order: 'asc', after: 'c' }))).toEqual({ object: 'list', data: [{ id: 'd' }, { id: 'e' }], first_id: 'd', last_id: 'e', has_more: false });
    expect(JSON.parse(itemsPage(items, { limit: 2, order: 'asc', after: 'b' })).has_more).toBe(true);
    expect(JSON.parse(itemsPage(items, { limit: 2, order: 'asc', after: 'e' }))).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('refuses a cursor that names none of the items, naming after', () => {
    expect(() => itemsPage(items, { limit: 2, order: 'asc', after: 'z' })).toThrow(expect.objectContaining({ code: 'invalid_parameter', param: 'after' }));
  });
});
