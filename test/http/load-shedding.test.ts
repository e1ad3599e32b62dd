/**
 * Load shedding per instance, through a real listening gateway: over `server.max_in_flight`, or
 * while the event loop lags above `server.max_event_loop_delay_ms`, a request is answered 503
 * `gateway_overloaded` at once (before authentication and body parsing), the probes still answer,
 * and the gateway serves again as soon as the pressure is gone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { errorOf, isEnvelope, startGateway, type RunningGateway } from '../support/gateway-harness.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let gw: RunningGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

const models = [
  { id: 'slow-chat', capabilities: ['chat'], context_window: 4096, routes: [{ provider: 'slow', model: 'm' }] },
  { id: 'mock-chat', capabilities: ['chat'], context_window: 4096, routes: [{ provider: 'fast', model: 'm' }] },
];
const providers = [
  { id: 'slow', kind: 'mock', mock: { latency_ms: 1500 } },
  { id: 'fast', kind: 'mock' },
];

function chat(gw: RunningGateway, model: string): Promise<Response> {
  return fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 5 }),
  });
}

function listModels(gw: RunningGateway): Promise<Response> {
  return fetch(`${gw.baseURL}/models`, { headers: { authorization: `Bearer ${gw.keys.main}` } });
}

async function expectOverloaded(res: Response, message: RegExp): Promise<void> {
  const { status, requestId, body } = await errorOf(res);
  expect(status).toBe(503);
  expect(isEnvelope(body)).toBe(true);
  expect(body.error).toMatchObject({ type: 'service_unavailable', code: 'gateway_overloaded', param: null });
  expect(body.error.message).toMatch(message);
  expect(requestId).toMatch(/^req_[0-9a-f]{32}$/);
  expect(res.headers.get('retry-after')).toBe('1');
  expect(res.headers.get('retry-after-ms')).toBe('1000');
  expect(res.headers.get('x-should-retry')).toBe('true');
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
}

describe('load shedding', () => {
  it('over server.max_in_flight: 503 gateway_overloaded before auth and body parsing, probes still answer, served again once the slow requests finish', async () => {
    gw = await startGateway({ config: { server: { max_in_flight: 2 }, providers, models } });
    const running = gw;
    const slow = [chat(running, 'slow-chat'), chat(running, 'slow-chat')];

    // Until both slow requests have reached the gateway, a fast one is still served.
    let refused: Response | undefined;
    const deadline = Date.now() + 1000;
    while (refused === undefined && Date.now() < deadline) {
      const res = await listModels(running);
      if (res.status === 503) refused = res;
      else expect(res.status).toBe(200);
    }
    expect(refused).toBeDefined();
    await expectOverloaded(refused!, /Too many requests in flight on this gateway instance \(its limit is 2\)/);

    // Shed before anything else looks at the request: no key, a body that is not JSON, the admin API.
    await expectOverloaded(await fetch(`${running.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' }), /limit is 2/);
    await expectOverloaded(await chat(running, 'mock-chat'), /limit is 2/);
    await expectOverloaded(await fetch(`${running.url}/admin/v1/accounts`), /limit is 2/);

    const health = await fetch(`${running.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${running.url}/readyz`)).status).toBe(200);

    const answers = await Promise.all(slow);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    await Promise.all(answers.map((r) => r.text()));
    const again = await chat(running, 'mock-chat');
    expect(again.status).toBe(200);
    expect(((await again.json()) as { object: string }).object).toBe('chat.completion');
  });

  it('a request under an Idempotency-Key that runs on after its caller left keeps its in-flight slot until it ends', async () => {
    gw = await startGateway({ config: { server: { max_in_flight: 1 }, providers, models } });
    const running = gw;
    const caller = new AbortController();
    const left = fetch(`${running.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.keys.main}`, 'content-type': 'application/json', 'idempotency-key': 'orphan-1' },
      body: JSON.stringify({ model: 'slow-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 5 }),
      signal: caller.signal,
    }).catch(() => null);
    await sleep(300);
    caller.abort();
    await left;
    await sleep(100);
    // The slow upstream call (1.5 s) still runs for the resend: the instance is full.
    await expectOverloaded(await chat(running, 'mock-chat'), /limit is 1/);
    // Once it ends (and is recorded), the slot is free again.
    let status = 503;
    const deadline = Date.now() + 3000;
    while (status === 503 && Date.now() < deadline) {
      await sleep(100);
      const res = await chat(running, 'mock-chat');
      status = res.status;
      await res.text();
    }
    expect(status).toBe(200);
  });

  it('while the event loop lags above server.max_event_loop_delay_ms: 503 gateway_overloaded, then served again after normal operation', { timeout: 20_000 }, async () => {
    gw = await startGateway({ config: { server: { max_event_loop_delay_ms: 50 }, providers, models } });
    const running = gw;
    // Start-up work may itself have delayed the loop: wait for a clean second.
    const ready = Date.now() + 3000;
    while ((await listModels(running)).status !== 200) {
      if (Date.now() > ready) throw new Error('the gateway did not serve within 3 s of start');
      await sleep(100);
    }

    // The gateway runs in this process: blocking the test's event loop blocks the gateway's.
    let refused: Response | undefined;
    for (let attempt = 0; attempt < 3 && refused === undefined; attempt++) {
      const blockedUntil = Date.now() + 300;
      while (Date.now() < blockedUntil) {
        // Busy: what a CPU-bound burst or a long GC pause does to the gateway.
      }
      // The delay is read once a second: the gateway sheds from the next reading.
      const until = Date.now() + 1500;
      while (refused === undefined && Date.now() < until) {
        const res = await chat(running, 'mock-chat');
        if (res.status === 503) refused = res;
        else await res.text();
        await sleep(25);
      }
    }
    expect(refused).toBeDefined();
    await expectOverloaded(refused!, /event-loop delay reached \d+ ms, above the threshold of 50 ms/);
    expect((await fetch(`${running.url}/healthz`)).status).toBe(200);

    const started = Date.now();
    let status = 503;
    while (status === 503 && Date.now() - started < 3500) {
      await sleep(100);
      const res = await chat(running, 'mock-chat');
      status = res.status;
      await res.text();
    }
    expect(status).toBe(200);
  });
});
