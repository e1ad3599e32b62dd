/**
 * Stalled request bodies where connections carry several requests (HTTP pipelining), on the probe
 * paths, and while the event loop is blocked: the 408 comes after the answers queued before it,
 * in-flight slots are always given back, a body Node itself holds back (pipelining backpressure)
 * or one whose bytes waited while the gateway was busy is not taken for a silent client.
 */
import { spawn } from 'node:child_process';
import { stat } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_MODEL, startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { RawConnection } from '../support/raw-http.js';

const IDLE_MS = 300;
const BODY = JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function chatHead(gw: RunningGateway): string {
  return `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${gw.keys.main}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(BODY)}\r\n\r\n`;
}

describe('in-flight slots of pipelined requests (a slow upstream, two slots)', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ config: { server: { max_in_flight: 2, body_idle_timeout_ms: IDLE_MS }, providers: [{ id: 'mock', kind: 'mock', mock: { latency_ms: 1500 } }] } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const chat = async (): Promise<number> => {
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' }, body: BODY });
    await res.arrayBuffer();
    return res.status;
  };

  it('gives back the slot of a pipelined request whose body never came, once its connection is closed', async () => {
    const conn = await RawConnection.open(gw.url);
    conn.write(chatHead(gw) + BODY + `GET /v1/models HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${gw.keys.main}\r\ncontent-length: 5\r\n\r\n`);
    await conn.closed(5_000);
    await sleep(2_000);
    expect(await Promise.all([chat(), chat()])).toEqual([200, 200]);
  });

  it('gives back both slots of a client that leaves a connection with two requests pipelined', async () => {
    const conn = await RawConnection.open(gw.url);
    conn.write(chatHead(gw) + BODY + chatHead(gw) + BODY);
    await sleep(200);
    conn.destroy();
    await sleep(2_500);
    expect(await Promise.all([chat(), chat()])).toEqual([200, 200]);
  });
});

describe('pipelined requests behind a slow one (a large answer queued)', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    // Enough models that GET /v1/models answers well over the socket's high-water mark.
    const models = [MOCK_MODEL, ...Array.from({ length: 300 }, (_, i) => ({ ...MOCK_MODEL, id: `mock-chat-with-a-long-name-${i}` }))];
    gw = await startGateway({ config: { server: { body_idle_timeout_ms: IDLE_MS }, models, providers: [{ id: 'mock', kind: 'mock', mock: { latency_ms: 1500 } }] } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('does not cut a body the client sent in full while Node holds the connection back', async () => {
    const conn = await RawConnection.open(gw.url);
    conn.write(chatHead(gw) + BODY + `GET /v1/models HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${gw.keys.main}\r\n\r\n`);
    await sleep(50);
    conn.write(chatHead(gw));
    await sleep(50);
    conn.write(BODY);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await conn.response(5_000)).status);
    conn.destroy();
    expect(statuses).toEqual([200, 200, 200]);
  });

  it('answers a stalled body pipelined behind a slow request after that request\'s answer, with 408', async () => {
    const conn = await RawConnection.open(gw.url);
    conn.write(chatHead(gw) + BODY + chatHead(gw) + BODY.slice(0, 10));
    const first = await conn.response(5_000);
    const second = await conn.response(5_000);
    conn.destroy();
    expect([first.status, second.status]).toEqual([200, 408]);
  });
});

describe('probe paths and a blocked event loop', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ config: { server: { body_idle_timeout_ms: IDLE_MS } } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it.each(['/healthz', '/metrics', '/readyz'])('cuts a stalled body sent to %s like any other', async (path) => {
    const conn = await RawConnection.open(gw.url);
    conn.write(`POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"a":`);
    const closed = await conn.closed(IDLE_MS * 10).then(
      () => true,
      () => false,
    );
    conn.destroy();
    expect(closed).toBe(true);
  });

  it('does not cut a body whose bytes arrived while the gateway was blocked', async () => {
    const { port } = new URL(gw.url);
    const head = chatHead(gw);
    // The client in another process: the head and 10 bytes, then the rest 200 ms later.
    const script = `
      const s = require('net').connect(${port}, '127.0.0.1', () => {
        s.write(${JSON.stringify(head + BODY.slice(0, 10))}); console.log('sent');
        setTimeout(() => s.write(${JSON.stringify(BODY.slice(10))}), 200);
      });
      let out = ''; s.on('data', (d) => { out += d; if (out.includes('\\r\\n\\r\\n')) done(); });
      const done = () => { console.log(JSON.stringify(out.split('\\r\\n')[0] || 'no answer')); process.exit(0); };
      s.on('close', done); setTimeout(done, 4000);`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    await new Promise<void>((r) => child.stdout.once('data', () => r()));
    output = '';
    await sleep(150);
    // Blocked for 1.5 timeouts inside an I/O callback, as a large synchronous parse would block it.
    await new Promise<void>((r) =>
      stat(fileURLToPath(import.meta.url), () => {
        const until = Date.now() + IDLE_MS * 1.5;
        while (Date.now() < until) {
          // busy
        }
        r();
      }),
    );
    await new Promise((r) => child.on('exit', r));
    expect(output).toContain('200');
  });
});
