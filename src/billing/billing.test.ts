import { describe, expect, it } from 'vitest';
import { Billing, type BilledRequest } from './billing.js';
import { SettlementWriter } from './settlement-writer.js';
import { createLogger } from '../logging/logger.js';
import type { CreditGate } from './types.js';
import type { Settlement, Store } from '../storage/types.js';

/** A store that keeps every committed batch. */
function recordingStore() {
  const batches: Settlement[][] = [];
  return {
    batches,
    commitSettlements(settlements: readonly Settlement[]): Promise<void> {
      batches.push([...settlements]);
      return Promise.resolve();
    },
  };
}

const noCredits: CreditGate = {
  hold: () => {
    throw new Error('not held in these tests');
  },
  balanceMoved: () => undefined,
  close: () => Promise.resolve(),
};

function billed(requestId: string): BilledRequest {
  return { requestId, accountId: 'acct', apiKeyId: 'key', model: 'm', modality: 'chat', price: { input_per_million_tokens: 1, output_per_million_tokens: 2 }, startedAt: Date.now() };
}

describe('Billing.settle', () => {
  it('commits a charged request\'s usage record in the same transaction as its charge', async () => {
    const store = recordingStore();
    const writer = new SettlementWriter(store as unknown as Store, createLogger('silent'));
    const billing = new Billing(noCredits, writer);
    await billing.settle(billed('r1'), null, { promptTokens: 1_000, completionTokens: 500, charged: true, status: 200, provider: 'p', upstreamModel: 'u' });
    // Durable when the caller is answered: a crash right after cannot keep the charge and lose the record.
    expect(store.batches).toHaveLength(1);
    const [committed] = store.batches[0] ?? [];
    expect(committed?.charge?.amountMicros).toBe(-2_000);
    expect(committed?.usage).toMatchObject({ requestId: 'r1', promptTokens: 1_000, completionTokens: 500, costMicros: 2_000, status: 200 });
    expect(writer.backlog).toBe(0);
    await writer.close();
  });

  it('queues the usage record of a request with nothing to commit, and writes it on close', async () => {
    const store = recordingStore();
    const writer = new SettlementWriter(store as unknown as Store, createLogger('silent'));
    const billing = new Billing(noCredits, writer);
    await billing.settle(billed('failed'), null, { promptTokens: 0, completionTokens: 0, charged: false, status: 502, provider: 'p', upstreamModel: 'u' });
    expect(store.batches).toHaveLength(0);
    expect(writer.backlog).toBe(1);
    await writer.close();
    expect(store.batches.flat().map((s) => [s.charge, s.usage?.status])).toEqual([[null, 502]]);
  });

  it.each([
    ['a fraction', 10.4, 20.6, 10, 21],
    ['a negative count', -3, 7, 0, 7],
    ['an overflow (1e400 parses as Infinity)', Infinity, 1, 2 ** 32, 1],
    ['NaN', Number.NaN, 5, 0, 5],
  ])('settles whole, bounded counts when an upstream reports %s', async (_what, prompt, completion, wantPrompt, wantCompletion) => {
    const store = recordingStore();
    const writer = new SettlementWriter(store as unknown as Store, createLogger('silent'));
    const billing = new Billing(noCredits, writer);
    await billing.settle(billed('odd'), null, { promptTokens: prompt, completionTokens: completion, charged: true, status: 200, provider: 'p', upstreamModel: 'u' });
    const [committed] = store.batches[0] ?? [];
    expect(committed?.usage).toMatchObject({ promptTokens: wantPrompt, completionTokens: wantCompletion });
    const cost = committed?.usage?.costMicros ?? Number.NaN;
    expect(Number.isSafeInteger(cost)).toBe(true);
    expect(committed?.charge?.amountMicros).toBe(-cost);
    await writer.close();
  });
});
