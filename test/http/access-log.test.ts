/** One access line per request, in pino's format, with the public key id and never the key. */
import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { generateApiKey } from '../../src/auth/api-key.js';
import { validateConfig } from '../../src/config/validate.js';
import { createGateway } from '../../src/app/gateway.js';
import { createLogger } from '../../src/logging/logger.js';
import { MOCK_MODEL } from '../support/gateway-harness.js';

describe('access log', () => {
  it('writes one line per request, escaping what the caller chose, without secrets', async () => {
    const { key, id } = generateApiKey();
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const config = validateConfig(
      {
        storage: { url: 'sqlite://:memory:' },
        log: { level: 'info', requests: true },
        providers: [{ id: 'mock', kind: 'mock' }],
        models: [MOCK_MODEL],
        tiers: { t: {} },
        accounts: [{ id: 'acct', tier: 't', keys: [{ key }] }],
      },
      'test',
    );
    const gateway = await createGateway(config, createLogger('silent'), { accessLogStream: out });
    const { url } = await gateway.listen(0, '127.0.0.1');
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': 'client "quoted" id' };
    const ok = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] }) });
    const bad = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'nope"\n', messages: [{ role: 'user', content: 'hi' }] }) });
    await fetch(`${url}/nowhere`);
    await gateway.close();
    const lines = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({ level: 30, msg: 'request', request_id: ok.headers.get('x-request-id'), status: 200, key_id: id, account: 'acct', model: 'mock-chat', provider: 'mock', prompt_tokens: expect.any(Number), completion_tokens: 7, client_request_id: 'client "quoted" id' });
    expect(lines[1]).toMatchObject({ request_id: bad.headers.get('x-request-id'), status: 404, model: 'nope"\n', error_code: 'model_not_found' });
    expect(lines[2]).toMatchObject({ status: 404, path: '/nowhere' });
    expect(text).not.toContain(key.slice(-40));
  });

  it('times each request from its arrival: a 300 ms upstream shows as at least 300 ms', async () => {
    const { key } = generateApiKey();
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const config = validateConfig(
      {
        storage: { url: 'sqlite://:memory:' },
        log: { level: 'info', requests: true },
        providers: [{ id: 'slow', kind: 'mock', mock: { latency_ms: 300 } }],
        models: [{ ...MOCK_MODEL, routes: [{ provider: 'slow', model: 'm' }] }],
        tiers: { t: {} },
        accounts: [{ id: 'acct', tier: 't', keys: [{ key }] }],
      },
      'test',
    );
    const gateway = await createGateway(config, createLogger('silent'), { accessLogStream: out });
    const { url } = await gateway.listen(0, '127.0.0.1');
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const body = (stream: boolean) => JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }], stream });
    await (await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers, body: body(false) })).text();
    await (await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers, body: body(true) })).text();
    await gateway.close();
    const lines = text.trim().split('\n').map((l) => JSON.parse(l) as { ms: number });
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.ms).toBeGreaterThanOrEqual(300);
  });

  it('logs a stream that ended in an error frame with that error code', async () => {
    const { key } = generateApiKey();
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const config = validateConfig(
      {
        storage: { url: 'sqlite://:memory:' },
        log: { level: 'info', requests: true },
        providers: [{ id: 'erring', kind: 'mock', mock: { error_after_chunks: 2 } }],
        models: [{ ...MOCK_MODEL, routes: [{ provider: 'erring', model: 'm' }] }],
        tiers: { t: {} },
        accounts: [{ id: 'acct', tier: 't', keys: [{ key }] }],
      },
      'test',
    );
    const gateway = await createGateway(config, createLogger('silent'), { accessLogStream: out });
    const { url } = await gateway.listen(0, '127.0.0.1');
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'one two three four' }], stream: true }),
    });
    expect(await res.text()).toContain('"error"');
    await gateway.close();
    const [line] = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(line).toMatchObject({ status: 200, stream_end: 'error', error_code: expect.stringMatching(/^upstream_/) });
  });
});
