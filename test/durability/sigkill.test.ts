/**
 * Nothing acknowledged is lost: the real gateway process is killed with SIGKILL under load, and
 * every request a client received an answer for is then found charged in the store, with its
 * usage record.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key.js';
import { openStore } from '../../src/storage/open-store.js';
import { freshSchemaUrl, postgresAvailable } from '../support/postgres.js';
import { serveCli } from '../support/spawn-cli.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Everything the gateway keeps on disk goes under `dir`, never the working tree. */
function configFor(storageUrl: string, key: string, dir: string): string {
  return `
storage: { url: "${storageUrl}", spill_directory: "${dir}/spill" }
blobs: { directory: "${dir}/blobs" }
log: { level: warn }
providers: [{ id: mock, kind: mock, mock: { latency_ms: 5 } }]
models:
  - id: paid
    capabilities: [chat]
    context_window: 8192
    max_output_tokens: 64
    price: { input_per_million_tokens: 1000, output_per_million_tokens: 2000 }
    routes: [{ provider: mock, model: m }]
tiers: { standard: {} }
accounts:
  - id: acct
    tier: standard
    credits: 1000000
    keys: [{ key: "${key}" }]
`;
}

async function loadUntilKilled(url: string, key: string, ms: number, kill: () => void): Promise<string[]> {
  const answered: string[] = [];
  let stop = false;
  setTimeout(() => {
    stop = true;
    kill();
  }, ms);
  const worker = async (): Promise<void> => {
    while (!stop) {
      try {
        const res = await fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'paid', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 8 }),
        });
        const text = await res.text();
        if (res.status === 200 && text.includes('"usage"')) answered.push(res.headers.get('x-request-id') as string);
      } catch {
        // The process is gone: requests in flight fail, and none of them was acknowledged.
      }
    }
  };
  await Promise.all(Array.from({ length: 24 }, worker));
  return answered;
}

describe.each(['sqlite', 'postgres'] as const)('SIGKILL under load (%s)', (backend) => {
  it('loses no charge or usage record a client received an answer for', { timeout: 60_000 }, async () => {
    if (backend === 'postgres') expect(await postgresAvailable()).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-kill-'));
    dirs.push(dir);
    const storageUrl = backend === 'sqlite' ? `sqlite://${join(dir, 'tollgate.db')}` : await freshSchemaUrl();
    const { key } = generateApiKey();
    const config = join(dir, 'tollgate.yaml');
    writeFileSync(config, configFor(storageUrl, key, dir));
    const served = await serveCli(['--config', config, '--port', '0']);
    const exited = new Promise((resolve) => served.child.once('exit', resolve));
    const answered = await loadUntilKilled(served.url, key, 1500, () => served.child.kill('SIGKILL'));
    await exited;
    expect(answered.length).toBeGreaterThan(50);

    const store = await openStore(storageUrl);
    try {
      const charges = (await store.listLedger('acct', 1_000_000)).filter((e) => e.kind === 'charge');
      const charged = new Set(charges.map((e) => e.requestId));
      const missing = answered.filter((id) => !charged.has(id));
      expect(missing).toEqual([]);
      expect((await store.getAccount('acct'))?.balanceMicros).toBe(await store.ledgerSum('acct'));
      // Every committed charge has its usage record: the two are committed together.
      const usage = await store.usageSummary({ accountId: 'acct' });
      expect(usage.reduce((sum, row) => sum + row.requests, 0)).toBeGreaterThanOrEqual(charges.length);
      expect(usage.reduce((sum, row) => sum + row.costMicros, 0)).toBe(-charges.reduce((sum, e) => sum + e.amountMicros, 0));
    } finally {
      await store.close();
    }
  });
});
