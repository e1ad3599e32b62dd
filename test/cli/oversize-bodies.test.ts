/**
 * Spec 4 rule 4 ("A request whose body or upload is over the size limit gives 413") with the
 * clients users have, against the real `tollgate serve` in its own process (in the test's own
 * process the timing hid the fault): a client that sends its whole body before it reads (fetch and
 * undici, the openai SDK) must receive the 413 envelope, not a connection reset.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../../src/auth/api-key.js';
import OpenAI, { toFile } from 'openai';
import { serveCli, type Served } from '../support/spawn-cli.js';

let served: Served;
let key: string;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-413-'));
  key = generateApiKey().key;
  writeFileSync(join(dir, 'tg.yaml'), `
server: { port: 0, body_limit: 64kb }
storage: { url: "sqlite://${dir}/t.db" }
blobs: { directory: "${dir}/blobs" }
uploads: { max_bytes: 10kb }
log: { level: silent }
providers: [{ id: mock, kind: mock }]
models: [{ id: mock-chat, capabilities: [chat], context_window: 8192, max_output_tokens: 1024, routes: [{ provider: mock, model: x }] }]
tiers: { t: { models: ["*"] } }
accounts: [{ id: a, tier: t, credits: 100, keys: [{ key: "${key}" }] }]
`);
  served = await serveCli(['--config', join(dir, 'tg.yaml'), '--port', '0'], { cwd: dir });
}, 30_000);
afterAll(async () => {
  await served?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function outcome(run: () => Promise<number>): Promise<string> {
  try {
    return String(await run());
  } catch (e) {
    const err = e as { status?: number; cause?: { code?: string; cause?: { code?: string } }; constructor: { name: string } };
    return err.status !== undefined ? String(err.status) : `${err.constructor.name}:${err.cause?.code ?? err.cause?.cause?.code ?? ''}`;
  }
}

describe('bodies over the limit, the gateway in its own process', () => {
  it('a 20 MB upload over uploads.max_bytes is answered 413 (openai SDK files.create)', async () => {
    const client = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: key, maxRetries: 0 });
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      seen.push(await outcome(async () => {
        await client.files.create({ purpose: 'user_data', file: await toFile(Buffer.alloc(20_000_000, 97), 'a.bin') });
        return 200;
      }));
    }
    expect(seen).toEqual(['413', '413', '413', '413', '413']);
  });

  it('a 10 MB JSON body over server.body_limit is answered 413 (fetch)', async () => {
    const seen: string[] = [];
    for (let i = 0; i < 20; i++) {
      seen.push(await outcome(async () => {
        const r = await fetch(`${served.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'a'.repeat(10_000_000) }] }),
        });
        await r.text();
        return r.status;
      }));
    }
    expect(seen.filter((s) => s !== '413')).toEqual([]);
  });
});
