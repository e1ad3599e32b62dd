/**
 * Upstream faults map to the spec's table (502, 503, 504, 408), before a stream starts as an HTTP
 * status and after it started as one error frame that the openai SDK raises.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { errorOf, isEnvelope, startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { readSseData } from '../support/sse.js';

let gw: RunningGateway;
let client: OpenAI;

const faults: Record<string, Record<string, unknown>> = {
  'fail-500': { fail_status: 500 },
  'fail-401': { fail_status: 401, fail_message: 'Incorrect API key provided: sk-up****1234' },
  'fail-400': { fail_status: 400, fail_message: 'context too long for upstream' },
  'fail-429': { fail_status: 429, retry_after_seconds: 7 },
  'fail-503': { fail_status: 503 },
  'fail-529': { fail_status: 529 },
  malformed: { malformed: true },
  hang: { hang: true },
  'slow-stream': { chunk_delay_ms: 400 },
  'steady-stream': { chunk_delay_ms: 150 },
  'break-3': { break_after_chunks: 3 },
  'error-3': { error_after_chunks: 3 },
};

beforeAll(async () => {
  const providers = [{ id: 'mock', kind: 'mock' }, ...Object.entries(faults).map(([id, mock]) => ({ id, kind: 'mock', mock }))];
  const models = providers.map((p) => ({ id: `m-${p.id}`, capabilities: ['chat', 'streaming'], context_window: 4096, routes: [{ provider: p.id, model: 'u' }] }));
  gw = await startGateway({
    config: {
      providers,
      models,
      upstream: { timeout_ms: 300, idle_timeout_ms: 250 },
      generation: { budget_ms: 700 },
    },
  });
  client = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.main!, maxRetries: 0 });
});
afterAll(() => gw.close());

const post = (model: string, stream = false, target: RunningGateway = gw) =>
  fetch(`${target.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.keys.main}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'one two three four five six' }], stream }),
  });

describe('upstream faults before the answer starts', () => {
  it.each([
    ['m-fail-500', 502, 'provider_error', 'upstream_error', 'true'],
    ['m-fail-401', 502, 'provider_error', 'upstream_auth_failed', 'true'],
    ['m-malformed', 502, 'provider_error', 'upstream_malformed_response', 'true'],
    ['m-fail-400', 400, 'invalid_request_error', 'upstream_rejected_request', 'false'],
    // The upstream's Retry-After cools its only route down: the resend is refused without a call.
    ['m-fail-429', 503, 'service_unavailable', 'upstream_unavailable', 'true', 'no_route_available'],
    ['m-fail-503', 503, 'service_unavailable', 'upstream_unavailable', 'true'],
    ['m-fail-529', 503, 'service_unavailable', 'upstream_unavailable', 'true'],
    ['m-hang', 504, 'timeout_error', 'upstream_timeout', 'true'],
  ])('%s → %i %s %s', async (model, status, type, code, retry, resendCode?: string) => {
    for (const stream of [false, true]) {
      const res = await post(model, stream);
      const { status: got, requestId, body } = await errorOf(res);
      expect(got).toBe(status);
      expect(requestId).toMatch(/^req_/);
      expect(isEnvelope(body)).toBe(true);
      expect(body.error).toMatchObject({ type, code: stream ? (resendCode ?? code) : code });
      expect(res.headers.get('x-should-retry')).toBe(retry);
    }
  });

  it('never passes an upstream 401 through as the caller\'s 401, nor its text', async () => {
    const { body } = await errorOf(await post('m-fail-401'));
    expect(body.error.message).not.toContain('sk-up');
    expect(body.error.message).toContain('fail-401');
  });

  it('relays the upstream Retry-After on 503 as Retry-After and retry-after-ms', async () => {
    const res = await post('m-fail-429');
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.headers.get('retry-after-ms')).toBe('7000');
  });

  it("relays an upstream's long Retry-After no longer than the route's cool-down cap", async () => {
    const capped = await startGateway({
      config: {
        providers: [{ id: 'busy', kind: 'mock', mock: { fail_status: 429, retry_after_seconds: 3600 } }],
        models: [{ id: 'm-busy', capabilities: ['chat'], context_window: 4096, routes: [{ provider: 'busy', model: 'u' }] }],
        routing: { circuit_breaker: { max_retry_after_ms: 30_000 } },
      },
    });
    try {
      const res = await post('m-busy', false, capped);
      const { status, body } = await errorOf(res);
      expect([status, body.error.code]).toEqual([503, 'upstream_unavailable']);
      expect(res.headers.get('retry-after')).toBe('30');
      expect(res.headers.get('retry-after-ms')).toBe('30000');
      expect(res.headers.get('x-should-retry')).toBe('true');
      // The cooled-down route tells the same: it comes back within the cap.
      const next = await post('m-busy', false, capped);
      expect(Number(next.headers.get('retry-after'))).toBeLessThanOrEqual(30);
    } finally {
      await capped.close();
    }
  });

  it('tells clients not to sleep through a wait of over a minute themselves', async () => {
    const busy = await startGateway({
      config: {
        providers: [{ id: 'busy', kind: 'mock', mock: { fail_status: 429, retry_after_seconds: 3600 } }],
        models: [{ id: 'm-busy', capabilities: ['chat'], context_window: 4096, routes: [{ provider: 'busy', model: 'u' }] }],
      },
    });
    try {
      const res = await post('m-busy', false, busy);
      expect((await errorOf(res)).body.error.code).toBe('upstream_unavailable');
      expect([res.headers.get('retry-after'), res.headers.get('x-should-retry')]).toEqual(['300', 'false']);
      // While the route cools down, the gateway's own 503 says the same.
      const next = await post('m-busy', false, busy);
      expect((await errorOf(next)).body.error.code).toBe('no_route_available');
      expect(Number(next.headers.get('retry-after'))).toBeGreaterThan(60);
      expect(next.headers.get('x-should-retry')).toBe('false');
    } finally {
      await busy.close();
    }
  });

  it('opens the circuit of a provider that breaks every stream halfway, after consecutive_failures of them', async () => {
    const breaking = await startGateway({
      config: {
        providers: [{ id: 'breaks', kind: 'mock', mock: { break_after_chunks: 3 } }],
        models: [{ id: 'm-breaks', capabilities: ['chat', 'streaming'], context_window: 4096, routes: [{ provider: 'breaks', model: 'u' }] }],
        routing: { circuit_breaker: { consecutive_failures: 2, cooldown_ms: 60_000 } },
      },
    });
    try {
      const stream = () => post('m-breaks', true, breaking);
      for (let i = 0; i < 2; i++) {
        const res = await stream();
        expect(res.status).toBe(200);
        expect(await res.text()).toContain('upstream_stream_truncated');
      }
      const refused = await errorOf(await stream());
      expect([refused.status, refused.body.error.code]).toEqual([503, 'no_route_available']);
    } finally {
      await breaking.close();
    }
  });

  it('answers 408 when the generation budget runs out before the upstream answers', async () => {
    const budgetGw = await startGateway({
      config: {
        providers: [{ id: 'slow', kind: 'mock', mock: { latency_ms: 2000 } }],
        models: [{ id: 'm-slow', capabilities: ['chat', 'streaming'], context_window: 4096, routes: [{ provider: 'slow', model: 'u' }] }],
        upstream: { timeout_ms: 5000 },
        generation: { budget_ms: 200 },
      },
    });
    try {
      const res = await fetch(`${budgetGw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${budgetGw.keys.main}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm-slow', messages: [{ role: 'user', content: 'x' }] }),
      });
      const { status, body } = await errorOf(res);
      expect(status).toBe(408);
      expect(body.error).toMatchObject({ type: 'timeout_error', code: 'generation_timeout' });
      expect(res.headers.get('x-should-retry')).toBe('true');
    } finally {
      await budgetGw.close();
    }
  });

  it('maps the openai SDK errors to the right classes', async () => {
    expect(await client.chat.completions.create({ model: 'm-fail-500', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.InternalServerError);
    const timeout = await client.chat.completions.create({ model: 'm-hang', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(timeout).toBeInstanceOf(OpenAI.APIError);
    expect((timeout as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
  });
});

describe('faults after a stream started arrive as one error frame', () => {
  it('sends an error frame with no choices and no [DONE] when the upstream cuts the stream', async () => {
    const res = await post('m-break-3', true);
    expect(res.status).toBe(200);
    const frames = await readSseData(res);
    expect(frames).toHaveLength(4);
    const last = JSON.parse(frames.at(-1)!);
    expect(isEnvelope(last)).toBe(true);
    expect(last.error).toMatchObject({ type: 'provider_error', code: 'upstream_stream_truncated' });
    expect(frames).not.toContain('[DONE]');
  });

  it('is raised by the openai SDK while iterating', async () => {
    const stream = await client.chat.completions.create({ model: 'm-error-3', messages: [{ role: 'user', content: 'x' }], stream: true });
    let received = 0;
    const err = await (async () => {
      for await (const _chunk of stream) received++;
    })().catch((e: unknown) => e);
    expect(received).toBe(3);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(String((err as Error).message)).toContain('mock failure');
  });

  it('sends an upstream_timeout frame when the upstream goes idle mid-stream', async () => {
    const frames = await readSseData(await post('m-slow-stream', true));
    const last = JSON.parse(frames.at(-1)!);
    expect(frames.length).toBeGreaterThan(1);
    expect(last.error).toMatchObject({ type: 'timeout_error', code: 'upstream_timeout' });
  });

  it('sends a generation_timeout frame when the budget runs out mid-stream', async () => {
    const frames = await readSseData(await post('m-steady-stream', true));
    const last = JSON.parse(frames.at(-1)!);
    expect(frames.length).toBeGreaterThan(2);
    expect(last.error).toMatchObject({ type: 'timeout_error', code: 'generation_timeout' });
  });
});
