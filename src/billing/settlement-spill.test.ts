import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../logging/logger.js';
import type { Settlement, Store } from '../storage/types.js';
import { SettlementSpillDirectory } from './settlement-spill.js';

const logger = createLogger('silent');
const directories: string[] = [];

function directory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-spill-'));
  directories.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of directories.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function settlement(requestId: string): Settlement {
  return {
    requestId,
    charge: { accountId: 'a', kind: 'charge', amountMicros: -5, requestId, apiKeyId: 'k', note: null },
    releaseReservation: true,
    usage: null,
    idempotency: { id: 'idem', accountId: 'a', fingerprint: 'f', requestId, status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from([0, 255, 10, 13]), createdAt: 1, expiresAt: 2 },
  };
}

/**
 * A store that records what it commits; `down` fails everything (as a store that cannot write),
 * from the `downAfter`-th commit on if given; `refused` refuses one request id for what it holds.
 */
function fakeStore(options: { down?: boolean; downAfter?: number; refused?: string } = {}) {
  const committed: Settlement[] = [];
  let commits = 0;
  return {
    committed,
    commitSettlements(settlements: readonly Settlement[]): Promise<void> {
      commits++;
      if (options.down === true && commits > (options.downAfter ?? 0)) return Promise.reject(Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' }));
      if (settlements.some((s) => s.requestId === options.refused)) return Promise.reject(Object.assign(new Error('value too long'), { code: '22001' }));
      committed.push(...settlements);
      return Promise.resolve();
    },
  };
}

describe('SettlementSpillDirectory', () => {
  it('commits at the next start what the last shutdown spilled, exactly (bytes included), then deletes the file', async () => {
    const dir = directory();
    const spill = new SettlementSpillDirectory(dir);
    const written = spill.write('unsettled', [settlement('r1'), settlement('r2')]);
    expect(readdirSync(dir)).toEqual([written.slice(dir.length + 1)]);
    const store = fakeStore();
    await spill.recover(store as unknown as Store, logger);
    expect(store.committed).toEqual([settlement('r1'), settlement('r2')]);
    expect(Buffer.isBuffer(store.committed[0]?.idempotency?.body)).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('keeps the file for the next start while the store takes none of it', async () => {
    const dir = directory();
    const spill = new SettlementSpillDirectory(dir);
    spill.write('unsettled', [settlement('r1')]);
    await spill.recover(fakeStore({ down: true }) as unknown as Store, logger);
    expect(readdirSync(dir)).toHaveLength(1);
  });

  it('keeps the whole file, setting nothing aside, when the store stops taking writes partway', async () => {
    const dir = directory();
    const spill = new SettlementSpillDirectory(dir);
    spill.write('unsettled', Array.from({ length: 300 }, (_, i) => settlement(`r${i}`)));
    const store = fakeStore({ down: true, downAfter: 1 });
    await spill.recover(store as unknown as Store, logger);
    expect(store.committed).toHaveLength(200);
    const left = readdirSync(dir);
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(/^tollgate-unsettled-/);
    // The next start, the store back, commits it all (the first 200 again, which commits are idempotent for).
    const back = fakeStore();
    await spill.recover(back as unknown as Store, logger);
    expect(back.committed).toHaveLength(300);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('sets aside what the store refuses alone, commits the rest', async () => {
    const dir = directory();
    const spill = new SettlementSpillDirectory(dir);
    spill.write('unsettled', [settlement('good'), settlement('bad')]);
    const store = fakeStore({ refused: 'bad' });
    await spill.recover(store as unknown as Store, logger);
    expect(store.committed.map((s) => s.requestId)).toEqual(['good']);
    const left = readdirSync(dir);
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(/^tollgate-rejected-.*\.jsonl$/);
  });

  it('reads nothing but its own finished files, and no directory at all is nothing to recover', async () => {
    const dir = directory();
    writeFileSync(join(dir, 'tollgate-unsettled-x.jsonl.tmp'), 'half a line');
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const store = fakeStore();
    await new SettlementSpillDirectory(dir).recover(store as unknown as Store, logger);
    await new SettlementSpillDirectory(join(dir, 'missing')).recover(store as unknown as Store, logger);
    expect(store.committed).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual(['notes.txt', 'tollgate-unsettled-x.jsonl.tmp']);
  });
});
