import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { UpstreamClient, readBodyText } from './upstream-client.js';
import { GatewayError } from '../../errors/index.js';
import { Cancellation } from '../../util/cancellation.js';

let server: Server;
let client: UpstreamClient;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    res.end('x'.repeat(req.url === '/v1/big' ? 100_000 : 10));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  client = new UpstreamClient({ baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/`, connectTimeoutMs: 1000, maxConnections: 2 });
});
afterAll(async () => {
  await client.close();
  server.close();
});

describe('UpstreamClient', () => {
  it('appends paths to the base path and reads the body', async () => {
    const signal = new Cancellation().signal;
    const res = await client.post('/small', '{}', {}, signal);
    expect(await readBodyText(res, signal)).toBe('x'.repeat(10));
  });

  it('refuses a body over the cap as an unusable answer', async () => {
    const signal = new Cancellation().signal;
    const res = await client.post('/big', '{}', {}, signal);
    const err = await readBodyText(res, signal, 1000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('upstream_malformed_response');
  });

  it('maps a closed port to upstream_unreachable', async () => {
    const closed = new UpstreamClient({ baseUrl: 'http://127.0.0.1:1/v1', connectTimeoutMs: 1000, maxConnections: 1 });
    const err = await closed.post('/x', '{}', {}, new Cancellation().signal).catch((e: unknown) => e);
    expect((err as GatewayError).code).toBe('upstream_unreachable');
    await closed.close();
  });
});
