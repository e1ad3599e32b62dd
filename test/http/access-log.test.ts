/** One access line per request, in pino's format, with the public key id and never the key. */
import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../../src/auth/api-key.js';
import { validateConfig } from '../../src/config/validate.js';
import { createGateway } from '../../src/app/gateway.js';
import { createLogger } from '../../src/logging/logger.js';
import { MOCK_MODEL } from '../support/gateway-harness.js';

/** A listening gateway whose access log is kept; `mock` is the options of its one provider. */
async function loggedGateway(mock?: Record<string, unknown>) {
  const { key, id } = generateApiKey();
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  // Its blobs and spill in a directory of its own, never in the working tree.
  const directory = mkdtempSync(join(tmpdir(), 'tollgate-test-access-log-'));
  const config = validateConfig(
    {
      storage: { url: 'sqlite://:memory:', spill_directory: join(directory, 'spill') },
      blobs: { directory: join(directory, 'blobs') },
      log: { level: 'info', requests: true },
      providers: [{ id: 'mock', kind: 'mock', ...(mock === undefined ? {} : { mock }) }],
      models: [MOCK_MODEL],
      tiers: { t: {} },
      accounts: [{ id: 'acct', tier: 't', keys: [{ key }] }],
    },
    'test',
  );
  const gateway = await createGateway(config, createLogger('silent'), { accessLogStream: out });
  const { url } = await gateway.listen(0, '127.0.0.1');
  const chat = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }], ...body }),
    });
  return {
    key,
    id,
    url,
    chat,
    text: () => text,
    /** Closes the gateway (which flushes the log) and returns its lines. */
    async lines(): Promise<Array<Record<string, unknown>>> {
      await gateway.close();
      rmSync(directory, { recursive: true, force: true });
      return text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    },
  };
}

describe('access log', () => {
  it('writes one line per request, escaping what the caller chose, without secrets', async () => {
    const gw = await loggedGateway();
    const quoted = { 'x-request-id': 'client "quoted" id' };
    const ok = await gw.chat({}, quoted);
    const bad = await gw.chat({ model: 'nope"\n' }, quoted);
    await fetch(`${gw.url}/nowhere?token=sk-secret-in-url`);
    // A whole key pasted where an id belongs: neither the answer nor the log has its secret.
    const pasted = await fetch(`${gw.url}/v1/key/${gw.key}`);
    expect([pasted.status, await pasted.text()]).toEqual([404, expect.not.stringContaining(gw.key.slice(-40)) as unknown]);
    const lines = await gw.lines();
    expect(lines).toHaveLength(4);
    expect(lines[3]).toMatchObject({ status: 404, path: `/v1/key/sk-tg-${gw.id}-…` });
    expect(lines[0]).toMatchObject({ level: 30, msg: 'request', request_id: ok.headers.get('x-request-id'), status: 200, key_id: gw.id, account: 'acct', model: 'mock-chat', provider: 'mock', prompt_tokens: expect.any(Number), completion_tokens: 7, client_request_id: 'client "quoted" id' });
    expect(lines[1]).toMatchObject({ request_id: bad.headers.get('x-request-id'), status: 404, model: 'nope"\n', error_code: 'model_not_found' });
    expect(lines[2]).toMatchObject({ status: 404, path: '/nowhere' });
    expect(gw.text()).not.toContain('sk-secret-in-url');
    expect(gw.text()).not.toContain(gw.key.slice(-40));
  });

  it('times each request from its arrival: a 300 ms upstream shows as at least 300 ms', async () => {
    const gw = await loggedGateway({ latency_ms: 300 });
    await (await gw.chat({ stream: false })).text();
    await (await gw.chat({ stream: true })).text();
    const lines = await gw.lines();
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.ms).toBeGreaterThanOrEqual(300);
  });

  it('logs a stream that ended in an error frame with that error code', async () => {
    const gw = await loggedGateway({ error_after_chunks: 2 });
    const res = await gw.chat({ stream: true, messages: [{ role: 'user', content: 'one two three four' }] });
    expect(await res.text()).toContain('"error"');
    const [line] = await gw.lines();
    expect(line).toMatchObject({ status: 200, stream_end: 'error', error_code: expect.stringMatching(/^upstream_/) });
  });
});
