import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { openStore } from '../storage/open-store.js';
import { createLogger } from '../logging/logger.js';
import type { Settlement, Store } from '../storage/types.js';
import { UsageRetention } from './usage-retention.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 23, 12);

function usageAt(requestId: string, accountId: string, startedAt: number): Settlement {
  return {
    requestId, charge: null, releaseReservation: false,
    usage: { requestId, accountId, apiKeyId: 'k', model: 'm', provider: 'p', upstreamModel: 'u', modality: 'chat', promptTokens: 1, completionTokens: 1, costMicros: 1, status: 200, latencyMs: 1, startedAt, endedAt: startedAt + 1 },
  };
}

function logLines() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger('info', stream) };
}

let store: Store;
beforeEach(async () => {
  store = await openStore('sqlite://:memory:');
  for (const id of ['a', 'b']) await store.createAccountIfAbsent({ id, name: null, tier: 't', balanceMicros: 0 });
});
afterEach(async () => {
  await store.close();
});

describe('UsageRetention', () => {
  it('deletes every account\'s records older than the retention, past several batches, and keeps the rest', async () => {
    const settlements: Settlement[] = [];
    for (let i = 0; i < 2_500; i++) settlements.push(usageAt(`old-a-${i}`, 'a', NOW - 40 * DAY + i));
    settlements.push(usageAt('old-b', 'b', NOW - 31 * DAY), usageAt('new-a', 'a', NOW - 29 * DAY), usageAt('new-b', 'b', NOW - DAY));
    await store.commitSettlements(settlements);
    const { lines, logger } = logLines();
    const retention = new UsageRetention(store, 30 * DAY, logger, () => NOW);
    await retention.sweep();
    await retention.close();
    const left = [...(await store.usageSummary({ accountId: 'a' })), ...(await store.usageSummary({ accountId: 'b' }))];
    expect(left.map((row) => [row.accountId, row.day, row.requests])).toEqual([
      ['a', '2026-10-25', 1],
      ['b', '2026-11-22', 1],
    ]);
    expect(lines.find((line) => line.msg === 'deleted usage records past their retention')).toMatchObject({ deleted: 2_501, before: '2026-10-24T12:00:00.000Z' });
  });

  it('reports a store that fails and tries again on the next sweep', async () => {
    await store.commitSettlements([usageAt('old', 'a', NOW - 40 * DAY)]);
    const { lines, logger } = logLines();
    const failing = Object.create(store) as Store;
    failing.deleteUsageRecordsBefore = () => Promise.reject(new Error('disk I/O error'));
    const broken = new UsageRetention(failing, 30 * DAY, logger, () => NOW);
    await broken.sweep();
    await broken.close();
    expect(lines.find((line) => line.msg === 'could not delete old usage records; trying again later')).toBeDefined();
    const retention = new UsageRetention(store, 30 * DAY, logger, () => NOW);
    await retention.sweep();
    await retention.close();
    expect(await store.usageSummary({ accountId: 'a' })).toEqual([]);
  });
});
