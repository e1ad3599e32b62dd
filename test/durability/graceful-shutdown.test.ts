/**
 * Usage records are written off the request's path in batches; a graceful shutdown still writes
 * every one of them (and every charge) before the store closes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openStore } from '../../src/storage/open-store.js';
import { startGateway } from '../support/gateway-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-shutdown-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('loses no usage record or charge on a graceful shutdown', async () => {
  const url = `sqlite://${join(dir, 'tollgate.db')}`;
  const price = { input_per_million_tokens: 1000, output_per_million_tokens: 1000 };
  const gw = await startGateway({
    config: { storage: { url }, models: [{ id: 'mock-chat', capabilities: ['chat'], context_window: 4096, price, routes: [{ provider: 'mock', model: 'm' }] }] },
  });
  const results = await Promise.all(
    Array.from({ length: 40 }, () =>
      fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
      }),
    ),
  );
  expect(results.every((r) => r.status === 200)).toBe(true);
  // Closed well inside the one-second batching of usage records.
  await gw.close();

  const store = await openStore(url);
  try {
    const rows = await store.usageSummary({ accountId: 'acct' });
    expect(rows.reduce((n, r) => n + r.requests, 0)).toBe(40);
    const charges = (await store.listLedger('acct', 1000)).filter((e) => e.kind === 'charge');
    expect(charges).toHaveLength(40);
    expect(rows.reduce((n, r) => n + r.costMicros, 0)).toBe(-charges.reduce((n, e) => n + e.amountMicros, 0));
    expect((await store.getAccount('acct'))?.balanceMicros).toBe(await store.ledgerSum('acct'));
  } finally {
    await store.close();
  }
});
