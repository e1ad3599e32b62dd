import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../storage/open-store.js';
import { createLogger } from '../logging/logger.js';
import type { Store } from '../storage/types.js';
import type { ResponseObject } from '../protocol/responses.js';
import { MAX_REFERENCED_RESPONSES, StoredResponses, responseIdOfItem } from './stored-responses.js';

let store: Store;
let responses: StoredResponses;
beforeEach(async () => {
  store = await openStore('sqlite://:memory:');
  responses = new StoredResponses(store, 60_000, createLogger('silent'));
});
afterEach(async () => {
  await responses.close();
  await store.close();
});

const hex = '0123456789abcdef0123456789abcdef';
const idOf = (n: number): string => n.toString(16).padStart(32, '0');
const user = (content: string) => ({ type: 'message', role: 'user', content });

function responseOf(digits: string, text: string): ResponseObject {
  return {
    id: `resp_${digits}`, object: 'response', created_at: 1, status: 'completed', error: null, incomplete_details: null, model: 'm', usage: null,
    output: [{ type: 'message', id: `msg_${digits}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }],
  };
}

describe('StoredResponses', () => {
  it('finds the response of an item by the digits in its id', () => {
    expect(responseIdOfItem(`msg_${hex}`)).toBe(`resp_${hex}`);
    expect(responseIdOfItem(`fc_${hex}_3`)).toBe(`resp_${hex}`);
    expect(responseIdOfItem('msg_67cb32528d6881909eb2859a55e18a85')).toBe('resp_67cb32528d6881909eb2859a55e18a85');
    expect(responseIdOfItem('rs_abc')).toBeUndefined();
  });

  it('gives back the kept items of the account, and nothing of another', async () => {
    const kept = responseOf(hex, 'Hi');
    await responses.keep('a', { response: kept, input: [], previousResponseId: null });
    expect([...(await responses.items('a', [`msg_${hex}`, 'msg_other'])).value.values()]).toEqual(kept.output);
    expect((await responses.items('b', [`msg_${hex}`])).value.size).toBe(0);
  });

  it('gives back a kept response as it was shown, to its account only, until deleted', async () => {
    const kept = responseOf(hex, 'Hi');
    await responses.keep('a', { response: kept, input: [], previousResponseId: null });
    expect(JSON.parse((await responses.get('a', `resp_${hex}`)) ?? 'null')).toEqual(kept);
    expect(await responses.get('b', `resp_${hex}`)).toBeUndefined();
    expect(await responses.delete('b', `resp_${hex}`)).toBe(false);
    expect(await responses.delete('a', `resp_${hex}`)).toBe(true);
    expect(await responses.get('a', `resp_${hex}`)).toBeUndefined();
    expect(await responses.delete('a', `resp_${hex}`)).toBe(false);
  });

  it('rebuilds a conversation oldest first: each response\'s input, then its output', async () => {
    const [one, two] = [idOf(1), idOf(2)];
    await responses.keep('a', { response: responseOf(one, 'Paris.'), input: [user('Capital of France?')], previousResponseId: null });
    await responses.keep('a', { response: responseOf(two, 'About 2 million.'), input: [user('Its population?')], previousResponseId: `resp_${one}` });
    const { value, bytes } = await responses.conversation('a', `resp_${two}`);
    expect(value).toEqual([[user('Capital of France?')], responseOf(one, 'Paris.').output, [user('Its population?')], responseOf(two, 'About 2 million.').output]);
    // What the request's token bound counts: the bytes of JSON read.
    expect(bytes).toBe(value.reduce((sum, run) => sum + Buffer.byteLength(JSON.stringify(run)), 0));
    await expect(responses.conversation('b', `resp_${two}`)).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found', param: 'previous_response_id' });
  });

  it('refuses a conversation with a response missing in it, naming the missing one', async () => {
    const [one, two] = [idOf(1), idOf(2)];
    await responses.keep('a', { response: responseOf(one, 'Paris.'), input: [user('Capital of France?')], previousResponseId: null });
    await responses.keep('a', { response: responseOf(two, 'About 2 million.'), input: [user('Its population?')], previousResponseId: `resp_${one}` });
    await responses.delete('a', `resp_${one}`);
    const refused = responses.conversation('a', `resp_${two}`);
    await expect(refused).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found', param: 'previous_response_id' });
    await expect(refused).rejects.toThrow(`resp_${one}`);
  });

  it('keeps a conversation as long as its last response: continuing it keeps the earlier ones', async () => {
    const now = Date.now();
    const [one, two] = [idOf(1), idOf(2)];
    // Kept long ago: a second of its time left (the service keeps responses for a minute).
    await store.putStoredResponse({ id: `resp_${one}`, accountId: 'a', output: '[]', response: null, input: '[]', previousResponseId: null, createdAt: now - 59_000, expiresAt: now + 1_000 });
    await responses.keep('a', { response: responseOf(two, 'Again.'), input: [user('Still there?')], previousResponseId: `resp_${one}` });
    // The earlier responses are kept longer in the background; closing waits for it.
    await responses.close();
    const [first] = await store.getStoredResponses('a', [`resp_${one}`], now + 30_000);
    expect(first?.expiresAt).toBeGreaterThanOrEqual(now + 60_000);
    expect((await store.getStoredResponseChain('a', `resp_${two}`, now + 30_000, 10)).map((turn) => turn.id)).toEqual([`resp_${two}`, `resp_${one}`]);
  });

  it('never sends the store an id Tollgate could not have made (PostgreSQL refuses a NUL in text)', async () => {
    const failing = new Proxy(store, { get: (target, name) => (name === 'close' ? target.close.bind(target) : () => Promise.reject(new Error('the store was asked'))) });
    const guarded = new StoredResponses(failing, 60_000, createLogger('silent'));
    try {
      for (const id of ['resp_\u0000x', 'resp_1', `resp_${hex}0`, `msg_${hex}`]) {
        await expect(guarded.conversation('a', id)).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
        expect(await guarded.get('a', id)).toBeUndefined();
        expect(await guarded.delete('a', id)).toBe(false);
      }
    } finally {
      await guarded.close();
    }
  });

  it('refuses to continue a response kept without its input (by an earlier version)', async () => {
    const now = Date.now();
    await store.putStoredResponse({ id: `resp_${hex}`, accountId: 'a', output: '[]', response: null, input: null, previousResponseId: null, createdAt: now, expiresAt: now + 60_000 });
    await expect(responses.conversation('a', `resp_${hex}`)).rejects.toMatchObject({ code: 'previous_response_not_found' });
    expect(await responses.get('a', `resp_${hex}`)).toBeUndefined();
  });

  it('refuses a request that refers to more responses than the cap with a 400 naming input', async () => {
    const ids = Array.from({ length: MAX_REFERENCED_RESPONSES + 1 }, (_, i) => `msg_${i.toString(16).padStart(32, '0')}`);
    await expect(responses.items('a', ids)).rejects.toMatchObject({ status: 400, code: 'invalid_parameter', param: 'input' });
  });
});
