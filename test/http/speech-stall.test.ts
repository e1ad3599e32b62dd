/**
 * A speech body is relayed under the request's deadlines: an upstream that stops in the middle of
 * the audio, or a caller that leaves before it starts, must not hold the key's in-flight slot (nor
 * its credit hold) after the request is over.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway-harness.js';

let upstream: Server;
let gw: RunningGateway;
/** How the upstream's big answers ended: 'finished' (all sent) or 'closed' (cut first). */
const bigEnds: string[] = [];

beforeAll(async () => {
  // Speaks OpenAI's speech wire format: `stall` sends the audio's first bytes and then nothing more;
  // `silent` sends its headers and no audio; `slow` answers only after 600 ms, then in full; `big`
  // answers after 600 ms with 64 MB, more than the sockets hold, so it ends only if someone reads it.
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const { model } = JSON.parse(body) as { model: string };
      if (model === 'stall' || model === 'silent') {
        res.writeHead(200, { 'content-type': 'audio/mpeg' });
        if (model === 'stall') res.write(Buffer.alloc(2048, 1));
        else res.flushHeaders();
        return;
      }
      if (model === 'big') {
        res.on('finish', () => bigEnds.push('finished'));
        res.on('close', () => {
          if (!res.writableFinished) bigEnds.push('closed');
        });
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'audio/mpeg' });
          res.end(Buffer.alloc(64 * 1024 * 1024, 3));
        }, 600);
        return;
      }
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'audio/mpeg' });
        res.end(Buffer.alloc(4096, 2));
      }, 600);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  const tts = (id: string) => ({ id, capabilities: ['speech'], context_window: 4096, price: { per_audio_second: 0.01 }, routes: [{ provider: 'up', model: id }] });
  gw = await startGateway({
    accounts: { acct: 'one-at-a-time' },
    keys: { main: { account: 'acct' } },
    config: {
      providers: [{ id: 'up', kind: 'openai', base_url: base, api_key: 'sk-upstream' }],
      models: [tts('stall'), tts('silent'), tts('slow'), tts('big')],
      upstream: { idle_timeout_ms: 300 },
      generation: { budget_ms: 5_000 },
      tiers: { 'one-at-a-time': { models: ['*'], endpoints: ['*'], limits: { max_in_flight: 1 } } },
    },
  });
});

afterAll(async () => {
  await gw?.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

const speech = (model: string, signal?: AbortSignal, headers: Record<string, string> = {}) =>
  fetch(`${gw.baseURL}/audio/speech`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, voice: 'alloy', input: 'hello' }),
    signal,
  });

/** Polls until the key's one in-flight slot is free again: a request is admitted. */
async function slotFreed(): Promise<boolean> {
  for (let i = 0; i < 40; i++) {
    const res = await speech('slow');
    await res.arrayBuffer().catch(() => undefined);
    if (res.status === 200) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

describe('a streamed speech body under the deadlines', () => {
  it('ends a body whose upstream stops sending, after the idle timeout, and frees the slot', async () => {
    const started = Date.now();
    const res = await speech('stall');
    expect(res.status).toBe(200);
    // The body is cut: the relay ends with an error instead of waiting for ever.
    await expect(res.arrayBuffer()).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(await slotFreed()).toBe(true);
  });

  it('ends the request of a caller that stops reading once its budget is over, and frees the slot', async () => {
    const { port } = new URL(gw.url);
    const body = JSON.stringify({ model: 'big', voice: 'alloy', input: 'hello' });
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      `POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.keys.main}\r\nContent-Type: application/json\r\n` +
        `X-Generation-Budget-Ms: 1500\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    // Never read: the 64 MB answer fills the sockets and the relay waits on them. (A paused socket
    // hears of its closing only once read, so the gateway's side is what is watched.)
    socket.pause();
    try {
      // Admitted at once, before the polling below could take the key's one slot first.
      await new Promise((r) => setTimeout(r, 200));
      let held = false;
      for (let i = 0; i < 40 && !held; i++) {
        const res = await speech('slow');
        await res.arrayBuffer().catch(() => undefined);
        held = res.status === 429;
      }
      expect(held).toBe(true);
      const started = Date.now();
      // Freed after the budget (1.5 s) and the grace (1 s), though the caller never left.
      expect(await slotFreed()).toBe(true);
      expect(Date.now() - started).toBeLessThan(6_000);
    } finally {
      socket.destroy();
    }
  });

  it('frees the slot when the caller leaves before the upstream answers', async () => {
    const leaving = new AbortController();
    const pending = speech('slow', leaving.signal).catch((err: unknown) => err);
    setTimeout(() => leaving.abort(), 200);
    expect(await pending).toBeInstanceOf(Error);
    expect(await slotFreed()).toBe(true);
  });

  it('times out an upstream that sends no audio at all after its headers, after the idle timeout', async () => {
    const started = Date.now();
    const res = await speech('silent');
    expect(res.status).toBe(504);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_timeout');
    // Failed after admission, before the audio's first byte: its error carries the rate-limit headers too.
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000000');
    expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    // The idle timeout (300 ms), not the generation budget (5 s).
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(await slotFreed()).toBe(true);
    // Counted once, as what the caller got; not a second time as a 200 when the relay ended.
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    const series = metrics.split('\n').filter((line) => line.startsWith('tollgate_requests_total{model="silent"'));
    expect(series).toEqual(['tollgate_requests_total{model="silent",route="up/silent",status="504",error_type="timeout_error"} 1']);
  });

  it('cancels the upstream call of a caller with an Idempotency-Key who left before the audio started', async () => {
    const leaving = new AbortController();
    const endsBefore = bigEnds.length;
    const pending = speech('big', leaving.signal, { 'idempotency-key': `left-${Date.now()}` }).catch((err: unknown) => err);
    setTimeout(() => leaving.abort(), 200);
    expect(await pending).toBeInstanceOf(Error);
    expect(await slotFreed()).toBe(true);
    // The upstream's 64 MB answer ended (cut, or read off and thrown away), rather than staying
    // half-sent on a connection nobody reads, which also kept the gateway from closing.
    for (let i = 0; i < 60 && bigEnds.length === endsBefore; i++) await new Promise((r) => setTimeout(r, 50));
    expect(bigEnds).toHaveLength(endsBefore + 1);
  });
});
