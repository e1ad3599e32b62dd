/**
 * Spec section 8 through a listening gateway, on both backends: the in-memory limiter and the
 * machine's real Redis (each gateway under a key prefix of its own).
 */
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { errorOf, isEnvelope, startGateway, type HarnessOptions, type RunningGateway } from '../support/gateway-harness.js';
import { clearPrefix, redisAvailable, uniquePrefix } from '../support/redis.js';
import { DEFAULT_REQUESTS_PER_MINUTE } from '../../src/limits/plan.js';

type Backend = 'memory' | 'redis';
const prefixes: string[] = [];
let redisUp = false;

beforeAll(async () => {
  redisUp = await redisAvailable();
});
afterAll(async () => {
  if (redisUp) for (const prefix of prefixes) await clearPrefix(prefix);
});

const running: RunningGateway[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((gw) => gw.close()));
});

const MODELS = [
  { id: 'mock-chat', capabilities: ['chat', 'streaming'], context_window: 100_000, max_output_tokens: 1024, routes: [{ provider: 'mock', model: 'm' }] },
  { id: 'big-model', capabilities: ['chat', 'streaming'], context_window: 100_000, max_output_tokens: 1024, routes: [{ provider: 'mock', model: 'm' }] },
  { id: 'slow-chat', capabilities: ['chat', 'streaming'], context_window: 100_000, max_output_tokens: 1024, routes: [{ provider: 'slow', model: 'm' }] },
  { id: 'broken-chat', capabilities: ['chat', 'streaming'], context_window: 100_000, max_output_tokens: 1024, routes: [{ provider: 'broken', model: 'm' }] },
  { id: 'cut-chat', capabilities: ['chat', 'streaming'], context_window: 100_000, max_output_tokens: 1024, routes: [{ provider: 'cut', model: 'm' }] },
  { id: 'firehose-chat', capabilities: ['chat', 'streaming'], context_window: 1_000_000, max_output_tokens: 500_000, routes: [{ provider: 'firehose', model: 'm' }] },
];
const PROVIDERS = [
  { id: 'mock', kind: 'mock' },
  { id: 'slow', kind: 'mock', mock: { latency_ms: 300, chunk_delay_ms: 20 } },
  { id: 'broken', kind: 'mock', mock: { fail_status: 500 } },
  { id: 'cut', kind: 'mock', mock: { error_after_chunks: 0 } },
  { id: 'firehose', kind: 'mock', mock: { reply: 'word '.repeat(200_000).trim() } },
];

async function start(backend: Backend, tiers: Record<string, unknown>, extra: Partial<HarnessOptions> = {}): Promise<RunningGateway> {
  let limits: HarnessOptions['limits'] = 'memory';
  if (backend === 'redis') {
    const keyPrefix = uniquePrefix();
    prefixes.push(keyPrefix);
    limits = { keyPrefix };
  }
  const gw = await startGateway({ limits, config: { providers: PROVIDERS, models: MODELS, tiers }, ...extra });
  running.push(gw);
  return gw;
}

function tier(limits: Record<string, unknown>, more: Record<string, unknown> = {}): Record<string, unknown> {
  return { standard: { models: ['*'], endpoints: ['*'], limits, ...more } };
}

function chat(gw: RunningGateway, body: Record<string, unknown> = {}, key = gw.keys.main, init: RequestInit = {}): Promise<Response> {
  return fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20, ...body }),
    ...init,
  });
}

interface ModelLimits {
  requests_per_minute: { limit: number; remaining: number; reset: number } | null;
  tokens_per_minute: { limit: number; remaining: number; reset: number } | null;
  daily: { limit: number; remaining: number; reset: number } | null;
  in_flight: { limit: number; remaining: number } | null;
}

async function limitsOf(gw: RunningGateway, model = 'mock-chat', key = gw.keys.main): Promise<ModelLimits> {
  const res = await fetch(`${gw.baseURL}/models/${model}`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { limits: ModelLimits }).limits;
}

/** Resolves a few milliseconds after the wall clock's next whole second. */
function startOfNextSecond(): Promise<void> {
  return new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
}

/** Polls until the check passes: a Redis settlement is sent after the response. */
async function eventually(check: () => Promise<void>, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

describe.each(['memory', 'redis'] as const)('rate limits on %s', (backend) => {
  beforeAll(() => {
    if (backend === 'redis' && !redisUp) throw new Error('Redis is not reachable');
  });

  it('admits exactly the requests per minute, then 429 with every header and an honest Retry-After', async () => {
    const gw = await start(backend, tier({ requests_per_minute: 4, tokens_per_minute: 50_000 }));
    const before = Math.floor(Date.now() / 1000);
    const results = await Promise.all(Array.from({ length: 10 }, () => chat(gw)));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(4);
    expect(refused).toHaveLength(6);
    for (const res of ok) {
      expect(res.headers.get('x-ratelimit-limit')).toBe('4');
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(before + 60);
      expect(res.headers.get('x-ratelimit-limit-tokens')).toBe('50000');
      expect(Number(res.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(50_000);
    }
    expect(ok.map((r) => r.headers.get('x-ratelimit-remaining')).sort()).toEqual(['0', '1', '2', '3']);
    const res = refused[0] as Response;
    for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'retry-after', 'x-request-id']) {
      expect(res.headers.get(h), h).not.toBeNull();
    }
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(res.headers.get('x-should-retry')).toBe('true');
    const { body } = await errorOf(res);
    expect(isEnvelope(body)).toBe(true);
    expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'requests_per_minute_exceeded', param: null });
    expect(body.error.message).toContain('4 requests per minute');
  });

  it('surfaces as the openai SDK RateLimitError with the code', async () => {
    const gw = await start(backend, tier({ requests_per_minute: 1 }));
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.main!, maxRetries: 0 });
    await client.chat.completions.create({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] });
    const err = await client.chat.completions.create({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('requests_per_minute_exceeded');
  });

  it('makes a tight retry loop last longer: refused requests count against the window', async () => {
    const gw = await start(backend, tier({ requests_per_minute: 2 }));
    // Windows count in whole seconds: send each pair early in its own second, so that the two
    // refusals below share one second and their waits differ by the second between the pairs.
    await startOfNextSecond();
    expect((await chat(gw)).status).toBe(200);
    expect((await chat(gw)).status).toBe(200);
    await startOfNextSecond();
    const first = await chat(gw);
    expect(first.status).toBe(429);
    expect((await errorOf(first)).body.error.message).toContain('sent 3 requests');
    // The two admitted requests leave the window first; the refused one is what holds the next.
    const again = await chat(gw);
    const wait1 = Number(first.headers.get('retry-after'));
    const wait2 = Number(again.headers.get('retry-after'));
    expect(wait1).toBeLessThanOrEqual(60);
    expect(wait2).toBeGreaterThan(wait1);
    expect((await errorOf(again)).body.error.message).toContain('sent 4 requests');
  });

  it('sends the rate-limit headers on streamed answers and on errors after admission too', async () => {
    const gw = await start(backend, tier({ requests_per_minute: 10, tokens_per_minute: 10_000 }));
    const res = await chat(gw, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('10');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('9');
    expect(res.headers.get('x-ratelimit-limit-tokens')).toBe('10000');
    await res.text();
    const failed = await chat(gw, { model: 'broken-chat' });
    expect(failed.status).toBe(502);
    expect(failed.headers.get('x-ratelimit-remaining')).toBe('8');
    expect(failed.headers.get('x-ratelimit-limit-tokens')).toBe('10000');
    // A request refused before admission (here: invalid) is not counted.
    expect((await chat(gw, { temperature: 5 })).status).toBe(400);
    expect((await chat(gw)).headers.get('x-ratelimit-remaining')).toBe('7');
  });

  it('reserves prompt bound plus max_tokens, settles to the real usage, and refuses what cannot fit', async () => {
    const gw = await start(backend, tier({ tokens_per_minute: 2000 }));
    const slow = { model: 'slow-chat', max_tokens: 800 };
    // Two in flight reserve about 2 × (800 + body size): the third does not fit.
    const [a, b] = [chat(gw, slow), chat(gw, slow)];
    await new Promise((r) => setTimeout(r, 100));
    const c = await chat(gw, slow);
    expect(c.status).toBe(429);
    const { body } = await errorOf(c);
    expect(body.error.code).toBe('tokens_per_minute_exceeded');
    expect(c.headers.get('x-ratelimit-limit-tokens')).toBe('2000');
    expect([(await a).status, (await b).status]).toEqual([200, 200]);
    const usage = ((await (await a).json()) as { usage: { total_tokens: number } }).usage.total_tokens;
    // Settled: what remains reflects the two answers' real usage, not their reservations.
    await eventually(async () => expect((await limitsOf(gw)).tokens_per_minute?.remaining).toBe(2000 - 2 * usage));

    const tooBig = await chat(gw, { max_tokens: 1000, messages: [{ role: 'user', content: 'x'.repeat(1500) }] });
    // A 429 like any limit exceeded (spec 8), with its headers, but one that no wait cures: the SDKs are told not to resend.
    expect(tooBig.status).toBe(429);
    const refusal = await errorOf(tooBig);
    expect(refusal.body.error).toMatchObject({ type: 'rate_limit_error', code: 'request_exceeds_token_limit', param: 'messages' });
    expect(refusal.body.error.message).toContain('2000 tokens per minute');
    expect(tooBig.headers.get('x-should-retry')).toBe('false');
    expect(Number(tooBig.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens']) {
      expect([header, tooBig.headers.get(header)]).toEqual([header, expect.stringMatching(/^\d+$/)]);
    }
    expect(tooBig.headers.get('x-ratelimit-limit-tokens')).toBe('2000');
    // The output cap's field, as the request named it, or max_tokens when it set none.
    for (const [body, param] of [[{ max_tokens: undefined }, 'max_tokens'], [{ max_tokens: undefined, max_completion_tokens: 5000 }, 'max_completion_tokens']] as const) {
      const { status, body: answer } = await errorOf(await chat(gw, { model: 'firehose-chat', ...body }));
      expect([status, answer.error.code, answer.error.param]).toEqual([429, 'request_exceeds_token_limit', param]);
    }
  });

  it('caps a modality per day, with Retry-After to midnight UTC, and does not count failed requests', async () => {
    const gw = await start(backend, tier({ daily: { chat: 2 } }));
    expect((await chat(gw, { model: 'broken-chat' })).status).toBe(502);
    expect((await chat(gw)).status).toBe(200);
    expect((await chat(gw)).status).toBe(200);
    await eventually(async () => expect((await limitsOf(gw)).daily?.remaining).toBe(0));
    const res = await chat(gw);
    expect(res.status).toBe(429);
    const { body } = await errorOf(res);
    expect(body.error.code).toBe('daily_cap_exceeded');
    const toMidnight = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400 - Date.now() / 1000;
    expect(Math.abs(Number(res.headers.get('retry-after')) - toMidnight)).toBeLessThan(5);
    // A wait of hours: the SDKs must not sleep on it.
    expect(res.headers.get('x-should-retry')).toBe('false');
    // Spec 8: every 429 carries the requests-per-minute headers too; a tier that sets none has the default.
    expect(res.headers.get('x-ratelimit-limit')).toBe(String(DEFAULT_REQUESTS_PER_MINUTE));
    expect(res.headers.get('x-ratelimit-remaining')).not.toBeNull();
    expect(res.headers.get('x-ratelimit-reset')).not.toBeNull();
  });

  it('limits requests in flight and frees each slot when its request ends', async () => {
    const gw = await start(backend, tier({ max_in_flight: 2 }));
    const results = await Promise.all(Array.from({ length: 5 }, () => chat(gw, { model: 'slow-chat' })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 429, 429, 429]);
    const refused = results.find((r) => r.status === 429) as Response;
    expect(refused.headers.get('retry-after')).toBe('1');
    for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(refused.headers.get(h), h).not.toBeNull();
    expect((await errorOf(refused)).body.error.code).toBe('too_many_requests_in_flight');
    await eventually(async () => expect((await limitsOf(gw, 'slow-chat')).in_flight).toEqual({ limit: 2, remaining: 2 }));
    expect((await chat(gw, { model: 'broken-chat' })).status).toBe(502);
    await eventually(async () => expect((await limitsOf(gw, 'slow-chat')).in_flight?.remaining).toBe(2));
  });

  it('finds the in-flight count back at zero after hundreds of streams are aborted mid-way', async () => {
    const gw = await start(backend, tier({ max_in_flight: 1000 }));
    const aborts = Array.from({ length: 300 }, async () => {
      const controller = new AbortController();
      const res = await chat(gw, { model: 'slow-chat', stream: true, max_tokens: 500 }, gw.keys.main, { signal: controller.signal });
      expect(res.status).toBe(200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      controller.abort();
    });
    await Promise.all(aborts);
    await eventually(async () => expect((await limitsOf(gw, 'slow-chat')).in_flight).toEqual({ limit: 1000, remaining: 1000 }), 10_000);
  });

  it('counts the tokens a stream really produced when the client disconnects', async () => {
    const gw = await start(backend, tier({ tokens_per_minute: 100_000 }));
    const controller = new AbortController();
    const res = await chat(gw, { model: 'slow-chat', stream: true, max_tokens: 1000, messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten' }] }, gw.keys.main, { signal: controller.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while ((text.match(/data: /g) ?? []).length < 4) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    // Reserved: about 1000 + the body; used once settled: the prompt (~16) plus the few chunks sent.
    await eventually(async () => {
      const used = 100_000 - ((await limitsOf(gw, 'slow-chat')).tokens_per_minute?.remaining ?? 0);
      expect(used).toBeGreaterThan(10);
      expect(used).toBeLessThan(40);
    });
  });

  it('reports the caller\u2019s current limits for a model, without counting the lookup', async () => {
    const gw = await start(backend, tier({ requests_per_minute: 30, tokens_per_minute: 9000, daily: { chat: 100 }, max_in_flight: 4 }));
    expect((await chat(gw)).status).toBe(200);
    const res = await fetch(`${gw.baseURL}/models/mock-chat`, { headers: { authorization: `Bearer ${gw.keys.main}` } });
    expect(res.headers.get('x-ratelimit-limit')).toBe('30');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('29');
    const { limits } = (await res.json()) as { limits: ModelLimits };
    const now = Date.now() / 1000;
    expect(limits.requests_per_minute).toMatchObject({ limit: 30, remaining: 29 });
    expect(limits.requests_per_minute?.reset).toBeGreaterThan(now + 58);
    expect(limits.tokens_per_minute?.limit).toBe(9000);
    expect(limits.tokens_per_minute?.remaining).toBeLessThan(9000);
    expect(limits.daily).toEqual({ limit: 100, remaining: 99, reset: (Math.floor(now / 86_400) + 1) * 86_400 });
    await eventually(async () => expect((await limitsOf(gw)).in_flight).toEqual({ limit: 4, remaining: 4 }));
    expect((await limitsOf(gw)).requests_per_minute?.remaining).toBe(29);
  });

  it('applies a model group its own limits, sharing the rest with the tier', async () => {
    const gw = await start(backend, tier({ requests_per_minute: 10, daily: { chat: 50 } }, { model_limits: [{ models: ['big-*'], limits: { requests_per_minute: 1 } }] }));
    expect((await chat(gw, { model: 'big-model' })).status).toBe(200);
    const refused = await chat(gw, { model: 'big-model' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('1');
    expect((await errorOf(refused)).body.error.message).toContain('model group of "big-model"');
    const other = await chat(gw);
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('9');
    // The daily cap is not set by the group: both models count against the one tier pool.
    expect((await limitsOf(gw, 'big-model')).daily?.remaining).toBe(48);
  });

  it("applies a key's new tier from its next request", async () => {
    const tiers = { standard: { models: ['*'], endpoints: ['*'], limits: { requests_per_minute: 1 } }, pro: { models: ['*'], endpoints: ['*'], limits: { requests_per_minute: 100 } } };
    const gw = await start(backend, tiers);
    expect((await chat(gw)).status).toBe(200);
    expect((await chat(gw)).status).toBe(429);
    await gw.gateway.store.updateAccount('acct', { tier: 'pro' });
    gw.gateway.keys.invalidateAccount('acct');
    const res = await chat(gw);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
  });

  it('counts each key on its own', async () => {
    const gw = await start(backend, tier({ requests_per_minute: 1 }), { keys: { main: {}, other: {} } });
    expect((await chat(gw)).status).toBe(200);
    expect((await chat(gw)).status).toBe(429);
    expect((await chat(gw, {}, gw.keys.other)).status).toBe(200);
  });

  it('sends the tier\u2019s own headers on the model list, without counting it', async () => {
    const gw = await start(backend, tier({ requests_per_minute: 7 }));
    expect((await chat(gw)).status).toBe(200);
    const res = await fetch(`${gw.baseURL}/models`, { headers: { authorization: `Bearer ${gw.keys.main}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('7');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('6');
  });

  it('sends the tier\u2019s own headers on files, video jobs, assets and kept responses, errors included, counting only uploads', async () => {
    const gw = await start(backend, tier({ requests_per_minute: 7, tokens_per_minute: 50_000 }));
    expect((await chat(gw)).status).toBe(200);
    const auth = { authorization: `Bearer ${gw.keys.main}` };
    const form = new FormData();
    form.set('purpose', 'user_data');
    form.set('file', new Blob(['RIFF-limits'], { type: 'audio/wav' }), 'a.wav');
    const upload = await fetch(`${gw.baseURL}/files`, { method: 'POST', headers: { ...auth, 'idempotency-key': 'limits-upload' }, body: form });
    expect(upload.status).toBe(200);
    const fileId = ((await upload.json()) as { id: string }).id;
    // An upload counts a request, its replay too, as on the endpoints that serve models.
    expect(upload.headers.get('x-ratelimit-remaining')).toBe('5');
    const replay = await fetch(`${gw.baseURL}/files`, { method: 'POST', headers: { ...auth, 'idempotency-key': 'limits-upload' }, body: form });
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.headers.get('x-ratelimit-remaining')]).toEqual([200, 'true', '4']);
    const answers = [
      await fetch(`${gw.baseURL}/files`, { headers: auth }),
      await fetch(`${gw.baseURL}/files/${fileId}/content`, { headers: auth }),
      await fetch(`${gw.baseURL}/files/file-none`, { headers: auth }),
      await fetch(`${gw.baseURL}/videos`, { headers: auth }),
      await fetch(`${gw.baseURL}/videos/video_none`, { headers: auth }),
      await fetch(`${gw.baseURL}/assets/asset_none`, { headers: auth }),
      await fetch(`${gw.baseURL}/responses/resp_none`, { headers: auth }),
      await fetch(`${gw.baseURL}/responses/resp_none`, { method: 'DELETE', headers: auth }),
    ];
    expect(answers.map((res) => res.status)).toEqual([200, 200, 404, 200, 404, 404, 404, 404]);
    for (const res of answers) {
      expect([res.url, res.headers.get('x-ratelimit-limit'), res.headers.get('x-ratelimit-remaining'), res.headers.get('x-ratelimit-limit-tokens')]).toEqual([res.url, '7', '4', '50000']);
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
      expect(Number(res.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(50_000);
    }
    // None of them counted: the next chat is the fourth request of the minute.
    expect((await chat(gw)).headers.get('x-ratelimit-remaining')).toBe('3');
  });

  it('holds an in-flight slot for an upload while it is received, and refuses one over the limit before reading it', async () => {
    const gw = await start(backend, tier({ max_in_flight: 1 }));
    const boundary = 'tollgate-slow-upload';
    let finish: () => void = () => undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF`));
        finish = () => {
          controller.enqueue(new TextEncoder().encode(`\r\n--${boundary}--\r\n`));
          controller.close();
        };
      },
    });
    const slow = fetch(`${gw.baseURL}/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    });
    await eventually(async () => expect((await limitsOf(gw, 'mock-chat')).in_flight?.remaining).toBe(0));
    const form = new FormData();
    form.set('purpose', 'user_data');
    form.set('file', new Blob(['RIFF'], { type: 'audio/wav' }), 'b.wav');
    const refused = await errorOf(await fetch(`${gw.baseURL}/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}` }, body: form }));
    expect([refused.status, refused.body.error.code]).toEqual([429, 'too_many_requests_in_flight']);
    finish();
    expect((await slow).status).toBe(200);
    await eventually(async () => expect((await limitsOf(gw, 'mock-chat')).in_flight?.remaining).toBe(1));
  });

  it('gives the daily count back when a stream fails before producing anything', async () => {
    const gw = await start(backend, tier({ daily: { chat: 5 } }));
    const res = await chat(gw, { model: 'cut-chat', stream: true });
    // Failed before its first chunk: nothing was sent yet, so the failure is still an HTTP status.
    expect(res.status).toBe(502);
    expect(await res.text()).toContain('"code":"upstream_error"');
    await eventually(async () => expect((await limitsOf(gw, 'cut-chat')).daily?.remaining).toBe(5));
  });
});

describe('a client that stops reading a stream', () => {
  it('does not keep its in-flight slot past the generation budget', async () => {
    // The budget runs from the request's start: on a machine busy with the rest of the suite, a fresh
    // gateway's first answer can take most of a second, which must not use the budget up before the check.
    const gw = await start('memory', tier({ max_in_flight: 1 }), { config: { providers: PROVIDERS, models: MODELS, tiers: tier({ max_in_flight: 1 }), generation: { budget_ms: 2_000 } } });
    const body = JSON.stringify({ model: 'firehose-chat', messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 400_000 });
    const url = new URL(gw.url);
    const socket = connect(Number(url.port), url.hostname);
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${gw.keys.main}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    // Read the first bytes, then stop reading while the gateway keeps producing.
    await new Promise((resolve) => socket.once('data', resolve));
    socket.pause();
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect((await limitsOf(gw, 'firehose-chat')).in_flight?.remaining).toBe(0);
      await eventually(async () => expect((await limitsOf(gw, 'firehose-chat')).in_flight?.remaining).toBe(1), 6_000);
    } finally {
      socket.destroy();
    }
  });
});
