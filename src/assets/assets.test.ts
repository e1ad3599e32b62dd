import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../storage/open-store.js';
import { LocalBlobStore } from '../storage/blobs/local-blob-store.js';
import { createLogger } from '../logging/logger.js';
import type { Store } from '../storage/types.js';
import { Assets } from './assets.js';

let dir: string;
let store: Store;
const opened: Assets[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-assets-'));
  store = await openStore(`sqlite://${join(dir, 'db.sqlite')}`);
});

afterEach(async () => {
  for (const assets of opened.splice(0)) await assets.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function assetsKeptFor(retentionMs: number): Assets {
  const assets = new Assets(store, new LocalBlobStore(join(dir, 'blobs')), retentionMs, createLogger('silent'));
  opened.push(assets);
  return assets;
}

describe('Assets.find', () => {
  it('finds an account\'s asset within its retention, and not another account\'s', async () => {
    const assets = assetsKeptFor(60_000);
    const saved = await assets.save('acct', 'req_1', new Uint8Array([1, 2, 3]), 'image/png');
    expect(await assets.find('acct', saved.id)).toMatchObject({ id: saved.id, bytes: 3 });
    await expect(assets.find('other', saved.id)).rejects.toMatchObject({ code: 'asset_not_found' });
  });

  it('does not serve an asset past its retention, even before the sweep removed it', async () => {
    const assets = assetsKeptFor(50);
    const saved = await assets.save('acct', 'req_1', new Uint8Array([1, 2, 3]), 'image/png');
    await new Promise((r) => setTimeout(r, 80));
    expect(await store.getAsset(saved.id)).toBeDefined();
    await expect(assets.find('acct', saved.id)).rejects.toMatchObject({ code: 'asset_not_found' });
  });
});
