/**
 * Spec 2.1, 4 rule 1, 7 rules 4: every response, from every path, carries X-Request-Id, and every
 * error is exactly the envelope with the status and type of the spec's table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { errorOf, isEnvelope, startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { RawConnection } from '../support/raw-http.js';

let gw: RunningGateway;
let auth: Record<string, string>;

beforeAll(async () => {
  gw = await startGateway({
    config: {
      server: { body_limit: '2kb' },
      providers: [{ id: 'mock', kind: 'mock' }, { id: 'buggy', kind: 'mock', mock: { crash: true } }],
      models: [
        { id: 'mock-chat', capabilities: ['chat', 'streaming'], context_window: 4096, routes: [{ provider: 'mock', model: 'm' }] },
        { id: 'buggy-chat', capabilities: ['chat', 'streaming'], context_window: 4096, routes: [{ provider: 'buggy', model: 'm' }] },
      ],
    },
  });
  auth = { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' };
});
afterAll(() => gw.close());

const chatBody = JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] });

describe('X-Request-Id and the envelope on every path', () => {
  it('sends a fresh req_ id on a success, and never reuses a client-sent one', async () => {
    const a = await fetch(`${gw.baseURL}/models`, { headers: { ...auth, 'x-request-id': 'client-chosen' } });
    const b = await fetch(`${gw.baseURL}/models`, { headers: auth });
    expect(a.status).toBe(200);
    expect(a.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    expect(b.headers.get('x-request-id')).not.toBe(a.headers.get('x-request-id'));
  });

  it('answers an unknown route with 404 not_found_error', async () => {
    const res = await fetch(`${gw.url}/nowhere`);
    const { status, requestId, body } = await errorOf(res);
    expect(status).toBe(404);
    expect(requestId).toMatch(/^req_/);
    expect(isEnvelope(body)).toBe(true);
    expect(body.error).toMatchObject({ type: 'not_found_error', code: 'route_not_found', param: null });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('answers a wrong method with 404 naming the methods the path accepts', async () => {
    const res = await fetch(`${gw.baseURL}/chat/completions`, { headers: auth });
    const { status, body } = await errorOf(res);
    expect(status).toBe(404);
    expect(res.headers.get('allow')).toContain('POST');
    expect(body.error.message).toContain('accepts POST');
  });

  it('answers an id in the path longer than any Tollgate makes with 404, like an unknown one', async () => {
    for (const path of [`/files/${'a'.repeat(600)}`, `/videos/${'b'.repeat(600)}`, `/responses/resp_${'c'.repeat(600)}`]) {
      const { status, requestId, body } = await errorOf(await fetch(`${gw.baseURL}${path}`, { headers: auth }));
      expect([status, body.error.code]).toEqual([404, 'route_not_found']);
      expect(requestId).toMatch(/^req_/);
    }
  });

  it('answers malformed JSON with 400 invalid_json', async () => {
    const { status, requestId, body } = await errorOf(await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: auth, body: '{"model": ' }));
    expect(status).toBe(400);
    expect(requestId).toMatch(/^req_/);
    expect(isEnvelope(body)).toBe(true);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });

  it('answers a body nested deeper than the gateway walks with 400 invalid_json, with or without an Idempotency-Key', async () => {
    const deep = `{"model":"mock-chat","messages":[{"role":"user","content":"hi"}],"x":${'['.repeat(500)}${']'.repeat(500)}}`;
    for (const headers of [auth, { ...auth, 'idempotency-key': 'deep-1' }]) {
      const { status, body } = await errorOf(await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers, body: deep }));
      expect([status, body.error.code]).toEqual([400, 'invalid_json']);
      expect(body.error.message).toContain('128 levels');
    }
  });

  it('answers a compressed body, which it does not decode, with 400 invalid_json saying so', async () => {
    const { gzipSync } = await import('node:zlib');
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { ...auth, 'content-encoding': 'gzip' }, body: gzipSync(chatBody) });
    const { status, body } = await errorOf(res);
    expect([status, body.error.code]).toEqual([400, 'invalid_json']);
    expect(body.error.message).toBe('The request body is sent with Content-Encoding: gzip, which Tollgate does not decode; send it uncompressed.');
  });

  it('answers an empty JSON body with 400 invalid_json', async () => {
    const { status, body } = await errorOf(await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: auth, body: '' }));
    expect(status).toBe(400);
    expect(body.error.code).toBe('invalid_json');
  });

  it('answers an unsupported content type with 400 unsupported_content_type', async () => {
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: chatBody });
    const { status, requestId, body } = await errorOf(res);
    expect(status).toBe(400);
    expect(requestId).toMatch(/^req_/);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_content_type' });
  });

  it('answers a body over the limit with 413 before reading the body', async () => {
    // Announce a large body but send none: the answer must come from the Content-Length alone.
    const answer = await new Promise<string>((resolve, reject) => {
      const { port } = new URL(gw.url);
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n`);
      });
      let data = '';
      socket.on('data', (chunk) => {
        data += chunk.toString();
        if (data.includes('}}')) {
          socket.destroy();
          resolve(data);
        }
      });
      socket.on('error', reject);
      setTimeout(() => reject(new Error(`no answer; got ${data}`)), 5000);
    });
    expect(answer).toMatch(/^HTTP\/1.1 413/);
    expect(answer).toMatch(/x-request-id: req_/i);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(isEnvelope(body)).toBe(true);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'request_too_large' });
  });

  it('reads a refused body to its end, so that the same connection carries the next request', async () => {
    const conn = await RawConnection.open(gw.url);
    const big = JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'x'.repeat(50_000) }] });
    const small = JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] });
    const head = (body: string): string =>
      `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: ${auth.authorization}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`;
    // Both sent at once, as a client that does not wait for the answer: the second follows the first's body.
    conn.write(head(big) + big + head(small) + small);
    const first = await conn.response(5_000);
    const second = await conn.response(5_000);
    conn.destroy();
    expect([first.status, (JSON.parse(first.body) as { error: { code: string } }).error.code]).toEqual([413, 'request_too_large']);
    expect(second.status).toBe(200);
  });

  it('answers a chunked body that crosses the limit with 413', async () => {
    const big = JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'x'.repeat(5000) }] });
    const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(big)); c.close(); } });
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: auth, body: stream, duplex: 'half' });
    const { status, body } = await errorOf(res);
    expect(status).toBe(413);
    expect(body.error.code).toBe('request_too_large');
  });

  it('answers bytes that are not HTTP with an enveloped 400 and a request id', async () => {
    const answer = await new Promise<string>((resolve) => {
      const { port } = new URL(gw.url);
      const socket = connect(Number(port), '127.0.0.1', () => socket.write('THIS IS NOT HTTP\r\n\r\n'));
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('close', () => resolve(data));
    });
    expect(answer).toMatch(/^HTTP\/1.1 400/);
    expect(answer).toMatch(/x-request-id: req_/i);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(isEnvelope(body)).toBe(true);
    expect(body.error.code).toBe('bad_http_request');
  });

  /** Writes raw bytes and reads until the server closes or a JSON body has arrived. */
  function raw(request: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const { port } = new URL(gw.url);
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
      let data = '';
      const done = (): void => {
        socket.destroy();
        resolve(data);
      };
      socket.on('data', (chunk) => {
        data += chunk.toString();
        const head = data.indexOf('\r\n\r\n');
        const length = /content-length: (\d+)/i.exec(data);
        if (head !== -1 && length !== null && data.length >= head + 4 + Number(length[1])) done();
      });
      socket.on('close', done);
      socket.on('error', reject);
    });
  }

  /** A raw answer that is a 400 bad_http_request in the envelope, with its request id. */
  function expectBadHttpRequest(answer: string): void {
    expect(answer).toMatch(/^HTTP\/1.1 400/);
    expect(answer).toMatch(/x-request-id: req_/i);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(isEnvelope(body)).toBe(true);
    expect(body.error.code).toBe('bad_http_request');
  }

  it('answers an HTTP/1.1 request without Host with an enveloped 400, which node:http would send bare', async () => {
    expectBadHttpRequest(await raw('GET /healthz HTTP/1.1\r\n\r\n'));
    expect(await raw('GET /healthz HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1.1 200/);
  });

  it('answers a CONNECT, which node:http would drop without a word, with an enveloped 400', async () => {
    expectBadHttpRequest(await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'));
  });

  it('answers a request with an unknown Expect as if it had none, instead of a bare 417', async () => {
    const answer = await raw(`GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth.authorization}\r\nExpect: foo\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1.1 200/);
    expect(answer).toMatch(/x-request-id: req_/i);
  });

  it('answers a fault inside the gateway with 500 server_error, no detail, and keeps serving', async () => {
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: auth, body: JSON.stringify({ model: 'buggy-chat', messages: [{ role: 'user', content: 'hi' }] }) });
    const { status, requestId, body } = await errorOf(res);
    expect(status).toBe(500);
    expect(requestId).toMatch(/^req_/);
    expect(body.error).toMatchObject({ type: 'server_error', code: 'internal_error', param: null });
    expect(body.error.message).not.toContain('simulated');
    expect(res.headers.get('x-should-retry')).toBe('true');
    const next = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: auth, body: chatBody });
    expect(next.status).toBe(200);
  });

  it('tells clients which errors to retry with x-should-retry, following the spec lists', async () => {
    const notFound = await fetch(`${gw.url}/nowhere`);
    expect(notFound.headers.get('x-should-retry')).toBe('false');
    const unauth = await fetch(`${gw.baseURL}/models`);
    expect(unauth.headers.get('x-should-retry')).toBe('false');
  });

  it('answers /healthz without a key', async () => {
    const res = await fetch(`${gw.url}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });
});
