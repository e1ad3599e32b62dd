/**
 * Credits and the ledger (spec 7, 402) through a listening gateway, on both storage backends:
 * SQLite (holds in memory) and PostgreSQL (holds in the store, shared by instances).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, isEnvelope, startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { freshSchemaUrl, postgresAvailable } from '../support/postgres.js';

type Backend = 'sqlite' | 'postgres';
let pgUp = false;
beforeAll(async () => {
  pgUp = await postgresAvailable();
});
const running: RunningGateway[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((gw) => gw.close()));
});

// 1,000 micro-credits a prompt token, 2,000 a completion token.
const PRICE = { input_per_million_tokens: 1000, output_per_million_tokens: 2000 };
const PROVIDERS = [
  { id: 'mock', kind: 'mock' },
  { id: 'slow', kind: 'mock', mock: { latency_ms: 300, chunk_delay_ms: 30 } },
  { id: 'broken', kind: 'mock', mock: { fail_status: 503 } },
];
const model = (id: string, provider: string) => ({ id, capabilities: ['chat', 'streaming'], context_window: 100_000, max_output_tokens: 1000, price: PRICE, routes: [{ provider, model: 'm' }] });
const MODELS = [model('paid', 'mock'), model('paid-slow', 'slow'), model('paid-broken', 'broken')];

async function start(backend: Backend, credits: number): Promise<RunningGateway> {
  const storage = backend === 'sqlite' ? 'sqlite://:memory:' : await freshSchemaUrl();
  const gw = await startGateway({ config: { storage: { url: storage }, providers: PROVIDERS, models: MODELS }, credits });
  running.push(gw);
  return gw;
}

function chat(gw: RunningGateway, body: Record<string, unknown> = {}, init: RequestInit = {}): Promise<Response> {
  return fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'paid', messages: [{ role: 'user', content: 'one two three four' }], max_tokens: 10, ...body }),
    ...init,
  });
}

async function balanceOf(gw: RunningGateway): Promise<number> {
  return (await gw.gateway.store.getAccount('acct'))?.balanceMicros ?? NaN;
}

/** The invariant: the balance is the sum of the ledger. */
async function expectLedgerBalanced(gw: RunningGateway): Promise<void> {
  expect(await balanceOf(gw)).toBe(await gw.gateway.store.ledgerSum('acct'));
}

describe.each(['sqlite', 'postgres'] as const)('credits on %s', (backend) => {
  beforeAll(() => {
    if (backend === 'postgres' && !pgUp) throw new Error('PostgreSQL is not reachable');
  });

  it('charges what was used, once, tied to the request and key, before the answer arrives', async () => {
    const gw = await start(backend, 10);
    const res = await chat(gw);
    expect(res.status).toBe(200);
    const { usage } = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    const cost = usage.prompt_tokens * 1000 + usage.completion_tokens * 2000;
    // Read right after the answer: the charge was committed before it was sent.
    expect(await balanceOf(gw)).toBe(10_000_000 - cost);
    const [charge] = await gw.gateway.store.listLedger('acct', 1);
    expect(charge).toMatchObject({ kind: 'charge', amountMicros: -cost, requestId: res.headers.get('x-request-id'), apiKeyId: gw.keys.main!.split('-')[2] });
    await expectLedgerBalanced(gw);
  });

  it('answers 402 with the balance and the cost, without calling the upstream', async () => {
    const gw = await start(backend, 0.05);
    const res = await chat(gw, { max_tokens: 100 });
    expect(res.status).toBe(402);
    const { body } = await errorOf(res);
    expect(isEnvelope(body)).toBe(true);
    expect(body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota', param: null });
    expect(body.error.message).toContain('balance of 0.05 credits');
    expect(body.error.message).toMatch(/may cost up to 0\.\d+ credits/);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect(await gw.gateway.store.usageSummary({ accountId: 'acct' })).toEqual([]);
    await expectLedgerBalanced(gw);
  });

  it('never overdraws under concurrency: exactly what the balance covers is admitted', async () => {
    const gw = await start(backend, 1);
    const body = { model: 'paid-slow' };
    // The worst case: the body's bytes as prompt tokens plus max_tokens as completion tokens.
    const worst = Buffer.byteLength(JSON.stringify({ model: 'paid-slow', messages: [{ role: 'user', content: 'one two three four' }], max_tokens: 10 })) * 1000 + 10 * 2000;
    const results = await Promise.all(Array.from({ length: 30 }, () => chat(gw, body)));
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBe(Math.floor(1_000_000 / worst));
    expect(results.filter((r) => r.status === 402)).toHaveLength(30 - ok);
    const balance = await balanceOf(gw);
    expect(balance).toBeGreaterThanOrEqual(0);
    expect(balance).toBeLessThan(1_000_000);
    await expectLedgerBalanced(gw);
  });

  it('charges an answer that came without usage by its text, at most the output cap it was held for', async () => {
    // An OpenAI-compatible server that reports no usage (some do), with more text than ten tokens of four characters.
    const upstream = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const content = ' '.repeat(400);
        res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'length' }] }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
      const storage = backend === 'sqlite' ? 'sqlite://:memory:' : await freshSchemaUrl();
      const providers = [...PROVIDERS, { id: 'bare', kind: 'openai', base_url: base, api_key: 'sk-bare' }];
      const gw = await startGateway({ config: { storage: { url: storage }, providers, models: [...MODELS, model('paid-bare', 'bare')] }, credits: 10 });
      running.push(gw);
      expect((await chat(gw, { model: 'paid-bare', max_tokens: 10 })).status).toBe(200);
      const [row] = await gw.gateway.store.usageSummary({ accountId: 'acct' });
      // 400 characters would be 100 tokens; the upstream was told 10 at most.
      expect(row?.completionTokens).toBe(10);
      expect(row?.costMicros).toBe((row?.promptTokens ?? NaN) * 1000 + 10 * 2000);
      await expectLedgerBalanced(gw);
    } finally {
      upstream.closeAllConnections();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });

  it('does not charge a request the provider failed, and records its usage', async () => {
    const gw = await start(backend, 10);
    const res = await chat(gw, { model: 'paid-broken' });
    expect(res.status).toBe(503);
    await expect.poll(async () => (await gw.gateway.store.usageSummary({ accountId: 'acct' })).map((r) => [r.model, r.requests, r.costMicros]), { timeout: 5000 }).toEqual([['paid-broken', 1, 0]]);
    expect(await balanceOf(gw)).toBe(10_000_000);
    await expectLedgerBalanced(gw);
  });

  it('charges a finished stream its usage, and a stream the client cut for what it produced', async () => {
    const gw = await start(backend, 10);
    const full = await chat(gw, { model: 'paid-slow', stream: true, stream_options: { include_usage: true } });
    const text = await full.text();
    const usage = JSON.parse(/data: (\{[^\n]*"usage":\{[^\n]*)\n/.exec(text)![1]!).usage as { prompt_tokens: number; completion_tokens: number };
    const fullCost = usage.prompt_tokens * 1000 + usage.completion_tokens * 2000;
    expect(await balanceOf(gw)).toBe(10_000_000 - fullCost);

    const controller = new AbortController();
    const cut = await chat(gw, { model: 'paid-slow', stream: true, max_tokens: 500, messages: [{ role: 'user', content: 'a b c d e f g h i j k l' }] }, { signal: controller.signal });
    const reader = (cut.body as ReadableStream<Uint8Array>).getReader();
    let seen = '';
    while ((seen.match(/data: /g) ?? []).length < 3) seen += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    // Charged for a few tokens, far from the 500-token worst case.
    await expect.poll(async () => 10_000_000 - fullCost - (await balanceOf(gw))).toBeGreaterThan(0);
    const cutCost = 10_000_000 - fullCost - (await balanceOf(gw));
    expect(cutCost).toBeLessThan(30 * 1000 + 10 * 2000);
    await expectLedgerBalanced(gw);
  });
});
