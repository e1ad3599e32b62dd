import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../logging/logger.js';
import { RawConnection } from '../../test/support/raw-http.js';
import { LoadShedder, isProbe } from './load-shedder.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A server whose requests wait until the test releases them (unless the path is /fast). */
async function serve(options: { maxInFlight?: number; maxEventLoopDelayMs?: number; sampleEveryMs?: number } = {}) {
  const shedder = new LoadShedder({
    maxInFlight: options.maxInFlight ?? 100,
    maxEventLoopDelayMs: options.maxEventLoopDelayMs ?? 1000,
    sampleEveryMs: options.sampleEveryMs,
    logger: createLogger('silent'),
  });
  const held: ServerResponse[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    req.resume();
    if (req.url === '/fast' || isProbe(req.url)) res.end(`ok ${req.url}`);
    else held.push(res);
  };
  const server: Server = shedder.serverFactory(handler, { keepAliveTimeout: 72_000 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const release = (): void => {
    for (const res of held.splice(0)) res.end('released');
  };
  const close = async (): Promise<void> => {
    shedder.stop();
    release();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { shedder, server, url, release, held, close };
}

let running: Awaited<ReturnType<typeof serve>> | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function until(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(5);
  }
}

describe('isProbe', () => {
  it('knows the probes, with or without a query, and nothing else', () => {
    for (const url of ['/healthz', '/readyz', '/metrics', '/healthz?verbose=1']) expect(isProbe(url)).toBe(true);
    for (const url of ['/v1/models', '/admin/v1/accounts', '/healthzz', '/ready', '/', '', '/h', '/metricsx?a', undefined]) expect(isProbe(url)).toBe(false);
  });
});

describe('LoadShedder', () => {
  it('answers 503 gateway_overloaded over the in-flight cap, before the handler and whatever the body, and counts each request until its response closes', async () => {
    running = await serve({ maxInFlight: 2 });
    const { url, shedder } = running;
    const first = fetch(`${url}/slow`);
    const second = fetch(`${url}/slow`, { method: 'POST', body: 'x'.repeat(100_000) });
    await until(() => running!.held.length === 2);
    expect(shedder.inFlight).toBe(2);

    const refused = await fetch(`${url}/fast`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'not json at all' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('retry-after-ms')).toBe('1000');
    expect(refused.headers.get('x-should-retry')).toBe('true');
    expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(refused.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    const body = (await refused.json()) as { error: Record<string, unknown> };
    expect(body).toEqual({ error: { message: expect.stringContaining('limit is 2') as unknown, type: 'service_unavailable', param: null, code: 'gateway_overloaded' } });
    expect(running.held).toHaveLength(2);

    // Probes are neither refused nor counted.
    expect(await (await fetch(`${url}/healthz`)).text()).toBe('ok /healthz');
    expect(await (await fetch(`${url}/readyz?full=1`)).text()).toBe('ok /readyz?full=1');

    running.release();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    await until(() => shedder.inFlight === 0);
    expect(await (await fetch(`${url}/fast`)).text()).toBe('ok /fast');
    await until(() => shedder.inFlight === 0);
  });

  it('counts a request the client abandons only until its connection closes', async () => {
    running = await serve({ maxInFlight: 1 });
    const controller = new AbortController();
    const abandoned = fetch(`${running.url}/slow`, { signal: controller.signal }).catch(() => 'aborted');
    await until(() => running!.held.length === 1);
    expect((await fetch(`${running.url}/fast`)).status).toBe(503);
    controller.abort();
    expect(await abandoned).toBe('aborted');
    await until(() => running!.shedder.inFlight === 0);
    expect((await fetch(`${running.url}/fast`)).status).toBe(200);
  });

  it('sheds while the event loop lags above the threshold, and serves again once it no longer does', async () => {
    running = await serve({ maxEventLoopDelayMs: 40, sampleEveryMs: 100 });
    const { url } = running;
    // Wait for a sample without start-up work (or a pause of the test runner) in it.
    await sleep(250);
    const calm = Date.now() + 3000;
    while ((await fetch(`${url}/fast`)).status !== 200) {
      if (Date.now() > calm) throw new Error('never served');
      await sleep(50);
    }
    let refused: Response | undefined;
    for (let attempt = 0; attempt < 3 && refused === undefined; attempt++) {
      const blockedUntil = Date.now() + 150;
      while (Date.now() < blockedUntil) {
        // The event loop is blocked: what a CPU-bound request or a long GC pause does.
      }
      for (let i = 0; i < 20 && refused === undefined; i++) {
        const res = await fetch(`${url}/fast`);
        if (res.status === 503) refused = res;
        else await res.text();
        await sleep(10);
      }
    }
    expect(refused?.status).toBe(503);
    const body = (await refused!.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('gateway_overloaded');
    expect(body.error.message).toMatch(/event-loop delay reached \d+ ms, above the threshold of 40 ms/);
    expect(refused!.headers.get('retry-after')).toBe('1');
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const deadline = Date.now() + 2000;
    let status = 503;
    while (status === 503 && Date.now() < deadline) {
      await sleep(50);
      status = (await fetch(`${url}/fast`)).status;
    }
    expect(status).toBe(200);
  });

  it('while draining: refuses new requests on open connections with shutting_down and Connection: close, lets probes and the requests in flight through, and closes connections as they go idle', async () => {
    running = await serve();
    const { url, shedder } = running;
    const busy = await RawConnection.open(url);
    const idle = await RawConnection.open(url);
    idle.send('GET', '/fast');
    expect(await idle.response()).toMatchObject({ status: 200 });
    busy.send('GET', '/slow');
    await until(() => running!.held.length === 1);

    shedder.beginDrain();
    expect(shedder.draining).toBe(true);
    await idle.closed(2000);
    // Pipelined behind the request in flight: answered in order, once it is done.
    busy.send('GET', '/healthz');
    busy.send('POST', '/v1/chat/completions', { 'content-type': 'application/json' }, '{"model":"x"}');
    const drained = shedder.idle();
    await sleep(50);
    running.release();
    await drained;

    const inFlight = await busy.response();
    expect(inFlight).toMatchObject({ status: 200, body: 'released' });
    expect(await busy.response()).toMatchObject({ status: 200, body: 'ok /healthz' });
    const refused = await busy.response();
    expect(refused.status).toBe(503);
    expect(refused.headers).toMatchObject({ connection: 'close', 'retry-after': '1', 'x-should-retry': 'true' });
    expect(JSON.parse(refused.body)).toMatchObject({ error: { type: 'service_unavailable', code: 'shutting_down', param: null } });
    await busy.closed(2000);
    expect(shedder.inFlight).toBe(0);
  });
});
