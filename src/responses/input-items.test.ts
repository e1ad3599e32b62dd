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

  it('keeps a caller\u2019s id for its latest item only, so that deleting an earlier response changes no id', () => {
    const first = { responseId: one, input: [{ id: 'msg_mine', role: 'user', content: 'a' }], output: [{ type: 'message', id: `msg_${one.slice(5)}`, role: 'assistant', status: 'completed', content: [] }] };
    const second = {
      responseId: two,
      input: [{ id: 'msg_mine', role: 'user', content: 'b' }, { id: 'msg_mine', role: 'user', content: 'c' }, { id: `msg_${one.slice(5)}`, role: 'assistant', content: 'handed back' }],
      output: [],
    };
    const whole = conversationItems([first, second]).map((item) => item.id);
    expect(whole).toEqual([
      'msg_00000000000000000000000000000001_in0',
      'msg_00000000000000000000000000000001',
      'msg_00000000000000000000000000000002_in0',
      'msg_mine',
      // Shaped like an output item's: the earlier response lists it, while it is kept.
      'msg_00000000000000000000000000000002_in2',
    ]);
    expect(conversationItems([second]).map((item) => item.id)).toEqual(whole.slice(2));
  });

  it('lists a run\u2019s several outputs in their order', () => {
    const output = ['a', 'b'].map((n) => ({ type: 'function_call', id: `fc_${one.slice(5)}_${n === 'a' ? 0 : 1}`, call_id: n, name: 'f', arguments: '{}', status: 'completed' }));
    expect(conversationItems([{ responseId: one, input: [], output }, { responseId: two, input: [], output: [] }])).toEqual(output);
  });

  it('gives a repeated output id (responses kept before message items had their own) a place of its own, so paging ends', () => {
    const message = (text: string) => ({ type: 'message', id: `msg_${one.slice(5)}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
    const items = conversationItems([{ responseId: one, input: [], output: [message('Let me check.'), message('Done.')] }]);
    const ids = items.map((item) => item.id);
    expect(new Set(ids).size).toBe(2);
    expect(ids[1]).toBe(`msg_${one.slice(5)}`);
    let after: string | undefined;
    const seen: string[] = [];
    for (let page = 0; page < 5; page++) {
      const listed = JSON.parse(itemsPage(items, { limit: 1, order: 'asc', ...(after === undefined ? {} : { after }) })) as { data: Array<{ id: string }>; has_more: boolean; last_id: string };
      seen.push(...listed.data.map((item) => item.id));
      if (!listed.has_more) break;
      after = listed.last_id;
    }
    expect(seen).toEqual(ids);
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
