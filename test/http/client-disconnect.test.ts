/** A caller that goes away stops the upstream call at once: no tokens burnt for nobody. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { startGateway, type RunningGateway } from '../support/gateway-harness.js';

let upstream: Server;
let upstreamClosed = 0;
let upstreamOpened = 0;
let gw: RunningGateway;
let hangNext = false;

beforeAll(async () => {
  // An OpenAI-compatible upstream that streams one chunk every 50 ms for a long time.
  upstream = createServer((req, res) => {
    upstreamOpened++;
    req.resume();
    if (hangNext) {
      // Never answers: only an abort from the gateway ends this request.
      res.on('close', () => upstreamClosed++);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const timer = setInterval(() => {
      res.write(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tick "},"finish_reason":null}]}\n\n`);
    }, 50);
    res.on('close', () => {
      clearInterval(timer);
      upstreamClosed++;
    });
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  const port = (upstream.address() as { port: number }).port;
  gw = await startGateway({
    config: {
      providers: [{ id: 'slow', kind: 'openai', base_url: `http://127.0.0.1:${port}/v1` }],
      models: [{ id: 'slow-model', capabilities: ['chat', 'streaming'], context_window: 4096, routes: [{ provider: 'slow', model: 'm' }] }],
    },
  });
});
afterAll(async () => {
  await gw.close();
  upstream.closeAllConnections();
  upstream.close();
});

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

describe('client disconnect', () => {
  it('closes the upstream stream promptly when the caller aborts mid-stream', async () => {
    const controller = new AbortController();
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow-model', messages: [{ role: 'user', content: 'x' }], stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    expect(upstreamOpened).toBe(1);
    controller.abort();
    await waitFor(() => upstreamClosed === 1);
    expect(upstreamClosed).toBe(1);
  });

  it('aborts the upstream call when the caller goes away before a non-streamed answer', async () => {
    hangNext = true;
    const controller = new AbortController();
    const pending = fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow-model', messages: [{ role: 'user', content: 'x' }] }),
      signal: controller.signal,
    }).catch(() => null);
    await waitFor(() => upstreamOpened === 2);
    const closedBefore = upstreamClosed;
    controller.abort();
    await pending;
    // The upstream timeout is two minutes: only the caller's abort can close it this soon.
    await waitFor(() => upstreamClosed === closedBefore + 1);
    expect(upstreamClosed).toBe(closedBefore + 1);
    // Recorded as the caller's doing (499), not as a failure of a provider that did nothing wrong.
    const series = 'tollgate_requests_total{model="slow-model",route="slow/m",status="499",error_type="client_closed"} 1';
    let metrics = '';
    for (let i = 0; i < 50 && !metrics.includes(series); i++) {
      metrics = await (await fetch(`${gw.url}/metrics`)).text();
      if (!metrics.includes(series)) await new Promise((r) => setTimeout(r, 20));
    }
    expect(metrics).toContain(series);
    expect(metrics).not.toContain('status="502"');
  });
});
