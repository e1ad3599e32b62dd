import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../storage/open-store.js';
import { createLogger } from '../logging/logger.js';
import type { Store } from '../storage/types.js';
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

describe('StoredResponses', () => {
  it('finds the response of an item by the digits in its id', () => {
    expect(responseIdOfItem(`msg_${hex}`)).toBe(`resp_${hex}`);
    expect(responseIdOfItem(`fc_${hex}_3`)).toBe(`resp_${hex}`);
    expect(responseIdOfItem('msg_67cb32528d6881909eb2859a55e18a85')).toBe('resp_67cb32528d6881909eb2859a55e18a85');
    expect(responseIdOfItem('rs_abc')).toBeUndefined();
  });

  it('gives back the kept items of the account, and nothing of another', async () => {
    const output = [{ type: 'message' as const, id: `msg_${hex}`, status: 'completed' as const, role: 'assistant' as const, content: [{ type: 'output_text' as const, text: 'Hi', annotations: [] }] }];
    await responses.keep('a', `resp_${hex}`, output);
    expect([...(await responses.items('a', [`msg_${hex}`, 'msg_other'])).values()]).toEqual(output);
    expect((await responses.items('b', [`msg_${hex}`])).size).toBe(0);
  });

  it('refuses a request that refers to more responses than the cap with a 400 naming input', async () => {
    const ids = Array.from({ length: MAX_REFERENCED_RESPONSES + 1 }, (_, i) => `msg_${i.toString(16).padStart(32, '0')}`);
    await expect(responses.items('a', ids)).rejects.toMatchObject({ status: 400, code: 'invalid_parameter', param: 'input' });
  });
});
