/**
 * JSON bodies that stop arriving (`server.body_idle_timeout_ms`), black box over raw connections:
 * a client that sends its headers and part of its body, or none of it, and then nothing, is
 * answered 408 `request_body_timeout` once its body has been silent for the timeout, and the
 * connection and the instance's in-flight slot are given back. A slow client that keeps sending is
 * not cut. (Multipart bodies: upload-stall.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { RawConnection } from '../support/raw-http.js';

const IDLE_MS = 300;
const BODY = JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'Say hello to the fox.' }] });

let gw: RunningGateway;

beforeAll(async () => {
  // One request in flight at a time: a stalled body holding its slot shows at once.
  gw = await startGateway({ config: { server: { max_in_flight: 1, body_idle_timeout_ms: IDLE_MS } } });
});

afterAll(async () => {
  await gw?.close();
});

function head(length: number): string {
  return `POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${gw.keys.main}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;
}

async function chatStatus(): Promise<number> {
  const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' }, body: BODY });
  await res.arrayBuffer();
  return res.status;
}

describe('request bodies that stop arriving', () => {
  it('answers 408 in the envelope to a JSON body stopped halfway, closes the connection and gives its slot back', async () => {
    // The key is looked up once, so that the stalled request's own wait is only for its body.
    expect(await chatStatus()).toBe(200);
    const conn = await RawConnection.open(gw.url);
    const started = Date.now();
    conn.write(head(Buffer.byteLength(BODY)) + BODY.slice(0, 20));
    await new Promise((r) => setTimeout(r, 100));
    // While it stalls it holds the instance's one slot.
    expect(await chatStatus()).toBe(503);

    const res = await conn.response(5_000);
    const waited = Date.now() - started;
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toEqual({
      error: { message: `No byte of the request body arrived for ${IDLE_MS} ms.`, type: 'timeout_error', param: null, code: 'request_body_timeout' },
    });
    expect(res.headers).toMatchObject({ connection: 'close', 'x-should-retry': 'true' });
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    expect(waited).toBeGreaterThanOrEqual(IDLE_MS - 20);
    expect(waited).toBeLessThan(IDLE_MS * 4);
    await conn.closed(2_000);
    expect(await chatStatus()).toBe(200);
  });

  it('answers 408 to headers announcing a body that never comes', async () => {
    const conn = await RawConnection.open(gw.url);
    conn.write(head(Buffer.byteLength(BODY)));
    const res = await conn.response(5_000);
    expect([res.status, (JSON.parse(res.body) as { error: { code: string } }).error.code]).toEqual([408, 'request_body_timeout']);
    await conn.closed(2_000);
    expect(await chatStatus()).toBe(200);
  });

  it('lets a slow body that keeps sending run past the timeout', async () => {
    const conn = await RawConnection.open(gw.url);
    conn.write(head(Buffer.byteLength(BODY)));
    const pieces = BODY.match(/.{1,12}/g) ?? [];
    // A piece every half of the timeout: the whole takes well over the timeout, no gap reaches it.
    for (const piece of pieces.slice(0, 8)) {
      await new Promise((r) => setTimeout(r, IDLE_MS / 2));
      conn.write(piece);
    }
    conn.write(pieces.slice(8).join(''));
    const res = await conn.response(5_000);
    expect(res.status).toBe(200);
    conn.destroy();
  });

  it('leaves a connection kept alive between requests alone', async () => {
    const conn = await RawConnection.open(gw.url);
    conn.write(head(Buffer.byteLength(BODY)) + BODY);
    expect((await conn.response(5_000)).status).toBe(200);
    await new Promise((r) => setTimeout(r, IDLE_MS * 3));
    conn.write(head(Buffer.byteLength(BODY)) + BODY);
    expect((await conn.response(5_000)).status).toBe(200);
    conn.destroy();
  });
});
