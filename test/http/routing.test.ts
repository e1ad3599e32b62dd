/**
 * Routing and resilience through a listening gateway (issue 6): a fault-injection matrix (each
 * mock fault × streamed or not × one route or a healthy fallback) checked for status, type, code,
 * error frame, the route that answered and the bill; then circuit breakers, cool-downs, the
 * resend routed away from a failed route, and the generation budget header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { errorOf, isEnvelope, startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { readSseData } from '../support/sse.js';
import { freePort } from '../support/ports.js';

const PRICE = { input_per_million_tokens: 1_000_000, output_per_million_tokens: 1_000_000 };
const BACKUP_REPLY = 'served by backup';

interface Fault {
  mock: Record<string, unknown>;
  /** A real adapter instead of the mock (set in beforeAll), for faults the mock cannot make. */
  provider?: Record<string, unknown>;
  /** The answer with this fault on the only route. */
  status: number;
  type: string;
  code: string;
  /** Whether a healthy fallback route takes the request over (before anything reached the caller). */
  failsOver: boolean;
}

const FAULTS: Record<string, Fault> = {
  'status-500': { mock: { fail_status: 500 }, status: 502, type: 'provider_error', code: 'upstream_error', failsOver: true },
  'bad-key': { mock: { fail_status: 401 }, status: 502, type: 'provider_error', code: 'upstream_auth_failed', failsOver: true },
  malformed: { mock: { malformed: true }, status: 502, type: 'provider_error', code: 'upstream_malformed_response', failsOver: true },
  'status-503': { mock: { fail_status: 503 }, status: 503, type: 'service_unavailable', code: 'upstream_unavailable', failsOver: true },
  'status-429': { mock: { fail_status: 429, retry_after_seconds: 1 }, status: 503, type: 'service_unavailable', code: 'upstream_unavailable', failsOver: true },
  hang: { mock: { hang: true }, status: 504, type: 'timeout_error', code: 'upstream_timeout', failsOver: true },
  'cut-before-first-chunk': { mock: { break_after_chunks: 0 }, status: 502, type: 'provider_error', code: 'upstream_stream_truncated', failsOver: true },
  // An OpenAI-compatible provider on a port where nothing listens.
  'connection-refused': { mock: {}, status: 502, type: 'provider_error', code: 'upstream_unreachable', failsOver: true },
  'status-400': { mock: { fail_status: 400, fail_message: 'bad' }, status: 400, type: 'invalid_request_error', code: 'upstream_rejected_request', failsOver: false },
  'adapter-bug': { mock: { crash: true }, status: 500, type: 'server_error', code: 'internal_error', failsOver: false },
};

let gw: RunningGateway;

beforeAll(async () => {
  const providers: Array<Record<string, unknown>> = [{ id: 'backup', kind: 'mock', mock: { reply: BACKUP_REPLY } }];
  const models: Array<Record<string, unknown>> = [];
  FAULTS['connection-refused']!.provider = { kind: 'openai', base_url: `http://127.0.0.1:${await freePort()}/v1`, api_key: 'sk-unused' };
  for (const [name, fault] of Object.entries(FAULTS)) {
    providers.push({ id: name, ...(fault.provider ?? { kind: 'mock', mock: fault.mock }) });
    models.push({ id: `solo-${name}`, capabilities: ['chat', 'streaming'], context_window: 4096, price: PRICE, routes: [{ provider: name, model: 'u' }] });
    models.push({
      id: `pair-${name}`,
      capabilities: ['chat', 'streaming'],
      context_window: 4096,
      price: PRICE,
      routes: [
        { provider: name, model: 'u', priority: 1 },
        { provider: 'backup', model: 'u', priority: 2 },
      ],
    });
  }
  providers.push({ id: 'mid-stream', kind: 'mock', mock: { break_after_chunks: 3 } }, { id: 'whole', kind: 'mock' });
  models.push({ id: 'solo-whole', capabilities: ['chat', 'streaming'], context_window: 4096, price: PRICE, routes: [{ provider: 'whole', model: 'u' }] });
  models.push({
    id: 'pair-mid-stream',
    capabilities: ['chat', 'streaming'],
    context_window: 4096,
    price: PRICE,
    routes: [
      { provider: 'mid-stream', model: 'u', priority: 1 },
      { provider: 'backup', model: 'u', priority: 2 },
    ],
  });
  gw = await startGateway({
    credits: 1_000_000,
    config: {
      providers,
      models,
      upstream: { timeout_ms: 200 },
      // The matrix looks at one request at a time: no circuit opens and no cool-down outlives its case.
      routing: { circuit_breaker: { consecutive_failures: 1000, max_retry_after_ms: 1 } },
    },
  });
});
afterAll(() => gw.close());

const post = (model: string, stream: boolean, headers: Record<string, string> = {}) =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'one two three' }], stream }),
  });

async function chargeOf(g: RunningGateway, requestId: string | null): Promise<number> {
  const entries = await g.gateway.store.listLedger('acct', 10_000);
  const total = entries.filter((e) => e.kind === 'charge' && e.requestId === requestId).reduce((n, e) => n + e.amountMicros, 0);
  return total === 0 ? 0 : -total;
}

/** The assistant text of a JSON answer or of a stream's chunks. */
async function contentOf(res: Response, stream: boolean): Promise<string> {
  if (!stream) return ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content;
  const frames = await readSseData(res);
  expect(frames.at(-1)).toBe('[DONE]');
  return frames
    .slice(0, -1)
    .map((f) => (JSON.parse(f) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '')
    .join('');
}

describe('fault-injection matrix', () => {
  const cases = Object.entries(FAULTS).flatMap(([name, fault]) =>
    [false, true].flatMap((stream) => [
      { name, fault, stream, topology: 'one route' as const },
      { name, fault, stream, topology: 'with fallback' as const },
    ]),
  );

  it.each(cases)('$name, stream $stream, $topology', async ({ name, fault, stream, topology }) => {
    // A cut before the first chunk only exists for streams; a non-streamed call to that mock succeeds.
    if (name === 'cut-before-first-chunk' && !stream) return;
    const res = await post(`${topology === 'one route' ? 'solo' : 'pair'}-${name}`, stream);
    const requestId = res.headers.get('x-request-id');
    if (topology === 'with fallback' && fault.failsOver) {
      expect(res.status).toBe(200);
      expect(await contentOf(res, stream)).toBe(BACKUP_REPLY);
      // Charged once, for what the fallback produced (3 prompt-ish tokens + 3 words, at one credit each).
      expect(await chargeOf(gw, requestId)).toBeGreaterThan(0);
      return;
    }
    const { status, body } = await errorOf(res);
    expect(status).toBe(fault.status);
    expect(isEnvelope(body)).toBe(true);
    expect(body.error).toMatchObject({ type: fault.type, code: fault.code });
    expect(requestId).toMatch(/^req_/);
    if (fault.status === 503) expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await chargeOf(gw, requestId)).toBe(0);
  });

  it('after the first chunk a failure is an error frame, not a fallback, billed for what was delivered', async () => {
    const res = await post('pair-mid-stream', true);
    expect(res.status).toBe(200);
    const frames = await readSseData(res);
    const last = JSON.parse(frames.at(-1)!) as { error: { code: string; type: string } };
    expect(last.error).toMatchObject({ type: 'provider_error', code: 'upstream_stream_truncated' });
    expect(frames).not.toContain('[DONE]');
    const delivered = frames.slice(0, -1).map((f) => JSON.parse(f) as { choices: Array<{ delta: { content?: string } }> });
    expect(delivered.length).toBe(3);
    expect(delivered.map((c) => c.choices[0]?.delta.content ?? '').join('')).not.toContain(BACKUP_REPLY);
    // The role chunk and two words: two completion tokens delivered, plus the prompt's estimate.
    const charge = await chargeOf(gw, res.headers.get('x-request-id'));
    expect(charge).toBeGreaterThan(0);
    // The same reply from a provider that does not cut it: nine words, charged six tokens more.
    const complete = await post('solo-whole', true);
    await complete.text();
    expect(await chargeOf(gw, complete.headers.get('x-request-id'))).toBe(charge + 6 * 1_000_000);
  });
});

describe('route health across requests', () => {
  let g: RunningGateway | undefined;
  afterAll(() => g?.close());

  function pair(first: Record<string, unknown>, routing: Record<string, unknown> = {}) {
    return startGateway({
      config: {
        providers: [
          { id: 'first', kind: 'mock', mock: { reply: 'from first', ...first } },
          { id: 'second', kind: 'mock', mock: { reply: 'from second' } },
        ],
        models: [
          {
            id: 'm',
            capabilities: ['chat', 'streaming'],
            context_window: 4096,
            routes: [
              { provider: 'first', model: 'u', priority: 1 },
              { provider: 'second', model: 'u', priority: 2 },
            ],
          },
        ],
        upstream: { timeout_ms: 300 },
        routing: { circuit_breaker: { consecutive_failures: 3, cooldown_ms: 600 }, ...routing },
      },
    });
  }

  const ask = async (target: RunningGateway, stream = false): Promise<string> => {
    const res = await fetch(`${target.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.keys.main}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream }),
    });
    if (res.status !== 200) return `${res.status} ${((await res.json()) as { error: { code: string } }).error.code}`;
    return contentOf(res, stream);
  };

  it('opens the circuit after consecutive failures, skips the route while open, then probes it and closes', async () => {
    // The first route fails three times, then would answer: a request that reached it would say so.
    g = await pair({ fail_status: 500, faulty_requests: 3 });
    for (let i = 0; i < 3; i++) expect(await ask(g)).toBe('from second');
    // Open: not even tried, although it would now succeed.
    expect(await ask(g)).toBe('from second');
    expect(await ask(g, true)).toBe('from second');
    await new Promise((r) => setTimeout(r, 700));
    // The cool-down is over: one probe goes through, succeeds, and closes the circuit.
    expect(await ask(g)).toBe('from first');
    expect(await ask(g)).toBe('from first');
    await g.close();
    g = undefined;
  });

  it('answers 503 no_route_available with Retry-After while every route of the model is open', async () => {
    g = await startGateway({
      config: {
        providers: [{ id: 'down', kind: 'mock', mock: { fail_status: 500 } }],
        models: [{ id: 'm', capabilities: ['chat'], context_window: 4096, routes: [{ provider: 'down', model: 'u' }] }],
        routing: { circuit_breaker: { consecutive_failures: 2, cooldown_ms: 5000 } },
        tiers: { standard: { models: ['*'], endpoints: ['*'], limits: { daily: { chat: 3 } } } },
      },
    });
    expect(await ask(g)).toBe('502 upstream_error');
    expect(await ask(g)).toBe('502 upstream_error');
    const res = await fetch(`${g.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${g.keys.main}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    });
    const { status, body } = await errorOf(res);
    expect(status).toBe(503);
    expect(body.error).toMatchObject({ type: 'service_unavailable', code: 'no_route_available', param: null });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(4);
    expect(res.headers.get('x-should-retry')).toBe('true');
    // Refused before the limits: nothing counted (the daily cap of 3 still has room for a third try).
    expect(res.headers.get('x-ratelimit-remaining')).toBe(null);
    const remaining = async (): Promise<string | null> => (await fetch(`${g!.baseURL}/models/m`, { headers: { authorization: `Bearer ${g!.keys.main}` } })).headers.get('x-ratelimit-remaining');
    const before = await remaining();
    expect(await ask(g)).toBe('503 no_route_available');
    expect(await remaining()).toBe(before);
    await g.close();
    g = undefined;
  });

  it('cools a route down for the Retry-After of its 429, then uses it again', async () => {
    g = await pair({ fail_status: 429, retry_after_seconds: 1, faulty_requests: 1 });
    expect(await ask(g)).toBe('from second');
    expect(await ask(g)).toBe('from second');
    await new Promise((r) => setTimeout(r, 1100));
    expect(await ask(g)).toBe('from first');
    await g.close();
    g = undefined;
  });

  it('moves to the next route when the first does not answer in time', async () => {
    g = await pair({ hang: true, faulty_requests: 1 });
    const started = Date.now();
    expect(await ask(g, true)).toBe('from second');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    await g.close();
    g = undefined;
  });

  it('routes the resend after a 502 away from the route that just failed the caller', async () => {
    // One attempt per request, both routes in one group tried in configuration order: only a
    // memory of the failure can send the resend to the second.
    g = await startGateway({
      config: {
        providers: [
          { id: 'first', kind: 'mock', mock: { fail_status: 500 } },
          { id: 'second', kind: 'mock', mock: { reply: 'from second' } },
        ],
        models: [
          {
            id: 'm',
            capabilities: ['chat'],
            context_window: 4096,
            routing: { strategy: 'priority', max_attempts: 1 },
            routes: [
              { provider: 'first', model: 'u' },
              { provider: 'second', model: 'u' },
            ],
          },
        ],
      },
      keys: { main: {}, other: {} },
    });
    expect(await ask(g)).toBe('502 upstream_error');
    expect(await ask(g)).toBe('from second');
    // Another caller is not affected by what this one saw.
    const other = await fetch(`${g.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${g.keys.other}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(other.status).toBe(502);
    await g.close();
    g = undefined;
  });

  it('spreads traffic by weight inside a priority group', async () => {
    g = await startGateway({
      config: {
        providers: [
          { id: 'heavy', kind: 'mock', mock: { reply: 'heavy' } },
          { id: 'light', kind: 'mock', mock: { reply: 'light' } },
        ],
        models: [
          {
            id: 'm',
            capabilities: ['chat'],
            context_window: 4096,
            routes: [
              { provider: 'heavy', model: 'u', weight: 4 },
              { provider: 'light', model: 'u', weight: 1 },
            ],
          },
        ],
      },
    });
    const counts: Record<string, number> = { heavy: 0, light: 0 };
    for (let i = 0; i < 200; i++) counts[await ask(g)]!++;
    expect(counts.heavy! + counts.light!).toBe(200);
    expect(counts.heavy! / 200).toBeGreaterThan(0.68);
    expect(counts.heavy! / 200).toBeLessThan(0.92);
    await g.close();
    g = undefined;
  });
});

describe('the generation budget', () => {
  let g: RunningGateway;
  beforeAll(async () => {
    g = await startGateway({
      config: {
        providers: [{ id: 'slow', kind: 'mock', mock: { latency_ms: 400 } }],
        models: [
          { id: 'm', capabilities: ['chat', 'streaming'], context_window: 4096, routes: [{ provider: 'slow', model: 'u' }] },
          { id: 'm-tight', capabilities: ['chat'], context_window: 4096, budget_ms: 100, routes: [{ provider: 'slow', model: 'u' }] },
        ],
      },
    });
  });
  afterAll(() => g.close());

  const send = (model: string, headers: Record<string, string> = {}) =>
    fetch(`${g.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${g.keys.main}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }),
    });

  it('is the model\'s own when it sets one', async () => {
    const { status, body } = await errorOf(await send('m-tight'));
    expect(status).toBe(408);
    expect(body.error).toMatchObject({ type: 'timeout_error', code: 'generation_timeout' });
    expect(body.error.message).toContain('100 ms');
  });

  it('may be lowered per request with X-Generation-Budget-Ms, never raised', async () => {
    const { status, body } = await errorOf(await send('m', { 'x-generation-budget-ms': '50' }));
    expect(status).toBe(408);
    expect(body.error.message).toContain('50 ms');
    expect((await send('m', { 'x-generation-budget-ms': '5000' })).status).toBe(200);
    expect((await send('m-tight', { 'x-generation-budget-ms': '5000' })).status).toBe(408);
  });

  it('rejects a malformed header with 400 naming it', async () => {
    const { status, body } = await errorOf(await send('m', { 'x-generation-budget-ms': 'soon' }));
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_parameter', param: 'X-Generation-Budget-Ms' });
  });

  it('is raised by the openai SDK as a 408 it may retry', async () => {
    const client = new OpenAI({ baseURL: g.baseURL, apiKey: g.keys.main!, maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'm-tight', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(408);
  });
});
