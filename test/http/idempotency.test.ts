/**
 * Idempotency-Key, black box, on both backends: memory claims over SQLite (one instance) and
 * Redis claims over PostgreSQL (several instances), each against listening gateways. A response
 * body carries its request's id (the mock's completion id is `chatcmpl-mock-<request id>`), so a
 * replay is told from a second execution by its body alone; charges are read from the ledger.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway, type HarnessOptions, type RunningGateway } from '../support/gateway-harness.js';
import { bindingRecordId, idempotencyRecordId } from '../../src/idempotency/fingerprint.js';
import { REDIS_URL, clearPrefix, redisAvailable, uniquePrefix } from '../support/redis.js';
import { freshSchemaUrl, postgresAvailable } from '../support/postgres.js';

const sharedUp = (await redisAvailable()) && (await postgresAvailable());
const price = { input_per_million_tokens: 1_000, output_per_million_tokens: 2_000 };
const model = (id: string, routes: unknown[], extra: Record<string, unknown> = {}) => ({
  id,
  capabilities: ['chat', 'streaming'],
  context_window: 4096,
  max_output_tokens: 1024,
  price,
  routes,
  ...extra,
});

const BASE_CONFIG = {
  providers: [
    { id: 'mock', kind: 'mock' },
    { id: 'slow', kind: 'mock', mock: { latency_ms: 400, chunk_delay_ms: 40 } },
    { id: 'broken', kind: 'mock', mock: { fail_status: 500 } },
    { id: 'picky', kind: 'mock', mock: { fail_status: 400, fail_message: 'bad field', faulty_requests: 1 } },
    { id: 'picky-terms', kind: 'mock', mock: { fail_status: 400, fail_message: 'max_tokens is too large for messages[0].content', faulty_requests: 1 } },
    { id: 'crashy', kind: 'mock', mock: { crash: true, faulty_requests: 1 } },
    { id: 'cuts', kind: 'mock', mock: { error_after_chunks: 2 } },
    // Never reached: the adapter refuses what it cannot translate before sending anything.
    { id: 'claude', kind: 'anthropic', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-ant-unused' },
  ],
  models: [
    model('mock-chat', [{ provider: 'mock', model: 'm' }]),
    model('slow-chat', [{ provider: 'slow', model: 's' }]),
    // One attempt per request: a failing first route answers 502 instead of failing over.
    model('flaky-chat', [{ provider: 'broken', model: 'b', priority: 1 }, { provider: 'mock', model: 'm', priority: 2 }], { routing: { max_attempts: 1 } }),
    model('picky-chat', [{ provider: 'picky', model: 'p' }]),
    model('picky-terms-chat', [{ provider: 'picky-terms', model: 'p' }]),
    model('crashy-chat', [{ provider: 'crashy', model: 'c' }]),
    model('claude-chat', [{ provider: 'claude', model: 'claude-haiku' }]),
    model('cut-chat', [{ provider: 'cuts', model: 'x' }]),
  ],
  tiers: {
    standard: { models: ['*'], endpoints: ['*'] },
    limited: { models: ['*'], endpoints: ['*'], limits: { requests_per_minute: 3, tokens_per_minute: 1_000_000, daily: { chat: 1 } } },
  },
};

interface Backend {
  name: string;
  /** Options that put a gateway on this backend; the same `storage` for several gateways shares it. */
  options(storage: Storage): HarnessOptions['config'];
  storage(): Promise<Storage>;
  cleanup(): Promise<void>;
}

interface Storage {
  url: string;
  prefix: string;
}

const tempDirs: string[] = [];
const prefixes: string[] = [];

const BACKENDS: Backend[] = [
  {
    name: 'memory claims over SQLite',
    options: (storage) => ({ storage: { url: storage.url } }),
    async storage() {
      const dir = await mkdtemp(join(tmpdir(), 'tollgate-idem-'));
      tempDirs.push(dir);
      return { url: `sqlite://${join(dir, 'tollgate.db')}`, prefix: '' };
    },
    async cleanup() {
      await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
    },
  },
  {
    name: 'Redis claims over PostgreSQL',
    options: (storage) => ({ storage: { url: storage.url }, idempotency: { backend: 'redis' }, redis: { url: REDIS_URL, key_prefix: storage.prefix } }),
    async storage() {
      const prefix = uniquePrefix();
      prefixes.push(prefix);
      return { url: await freshSchemaUrl(), prefix };
    },
    async cleanup() {
      await Promise.all(prefixes.map((p) => clearPrefix(p)));
    },
  },
];

const KEYS = { main: { account: 'acct' }, other: { account: 'other' }, limited: { account: 'lim' } };
const ACCOUNTS = { acct: 'standard', other: 'standard', lim: 'limited' };

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

let keyCounter = 0;
/** A key no other test uses. */
const newKey = (): string => `key-${process.pid}-${Date.now()}-${++keyCounter}`;

async function post(gw: RunningGateway, body: string | Record<string, unknown>, headers: Record<string, string>, apiKey = gw.keys.main!): Promise<Answer> {
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const chatBody = (modelId = 'mock-chat', content = 'hello there', extra: Record<string, unknown> = {}) => ({ model: modelId, messages: [{ role: 'user', content }], max_tokens: 50, ...extra });

async function charges(gw: RunningGateway, account = 'acct'): Promise<number> {
  return (await gw.gateway.store.listLedger(account, 10_000)).filter((e) => e.kind === 'charge').length;
}

function errorCode(answer: Answer): string {
  return (JSON.parse(answer.text) as { error: { code: string } }).error.code;
}

const isReplay = (answer: Answer): boolean => answer.headers.get('idempotent-replayed') === 'true';

/** Resends until the answer is not "still running" (a request whose caller left finishes on its own). */
async function resendUntilDone(send: () => Promise<Answer>, ms = 8_000): Promise<Answer> {
  const deadline = Date.now() + ms;
  for (;;) {
    const answer = await send();
    if (answer.status !== 409 || errorCode(answer) !== 'idempotency_key_in_use' || Date.now() > deadline) return answer;
    await new Promise((r) => setTimeout(r, 100));
  }
}

afterAll(async () => {
  for (const backend of BACKENDS) if (backend.name.startsWith('memory') || sharedUp) await backend.cleanup();
});

describe.each(BACKENDS)('Idempotency-Key with $name', (backend) => {
  let gw: RunningGateway;
  let storage: Storage;
  const shared = backend.name.startsWith('Redis');

  async function start(extra: Record<string, unknown> = {}, on: Storage = storage, presetKeys?: Record<string, string>): Promise<RunningGateway> {
    return startGateway({ accounts: ACCOUNTS, keys: KEYS, ...(presetKeys ? { presetKeys } : {}), config: { ...BASE_CONFIG, ...backend.options(on), ...extra } });
  }

  beforeAll(async () => {
    if (shared && !sharedUp) throw new Error('Redis and PostgreSQL are required for this backend');
    storage = await backend.storage();
    gw = await start();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('replays an identical resend byte for byte, with a fresh request id, without running or charging it again', async () => {
    const key = newKey();
    const first = await post(gw, chatBody(), { 'idempotency-key': key });
    expect(first.status).toBe(200);
    expect(isReplay(first)).toBe(false);
    const charged = await charges(gw);
    const balance = (await gw.gateway.store.getAccount('acct'))?.balanceMicros;

    // The same body with its keys in another order and other white space is the same request.
    const reordered = `{ "max_tokens": 50,\n  "messages": [ { "content": "hello there", "role": "user" } ],\n  "model": "mock-chat" }`;
    const again = await post(gw, reordered, { 'idempotency-key': key });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(isReplay(again)).toBe(true);
    expect(again.headers.get('x-original-request-id')).toBe(first.headers.get('x-request-id'));
    expect(again.headers.get('x-request-id')).toMatch(/^req_/);
    expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(await charges(gw)).toBe(charged);
    expect((await gw.gateway.store.getAccount('acct'))?.balanceMicros).toBe(balance);
  });

  it('takes a quoted key as the same key as its bare form', async () => {
    const key = newKey();
    const first = await post(gw, chatBody(), { 'idempotency-key': key });
    const quoted = await post(gw, chatBody(), { 'idempotency-key': `"${key}"` });
    expect(quoted.text).toBe(first.text);
    expect(isReplay(quoted)).toBe(true);
  });

  it('answers 409 idempotency_key_reused to the same key with another body, and runs nothing', async () => {
    const key = newKey();
    const first = await post(gw, chatBody('mock-chat', 'first question'), { 'idempotency-key': key });
    expect(first.status).toBe(200);
    const charged = await charges(gw);
    const other = await post(gw, chatBody('mock-chat', 'another question'), { 'idempotency-key': key });
    expect(other.status).toBe(409);
    expect(JSON.parse(other.text)).toEqual({
      error: { type: 'invalid_request_error', code: 'idempotency_key_reused', param: 'Idempotency-Key', message: expect.stringContaining(first.headers.get('x-request-id')!) },
    });
    expect(other.headers.get('x-should-retry')).toBe('false');
    expect(other.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await charges(gw)).toBe(charged);
  });

  it('answers 409 idempotency_key_in_use with Retry-After while the first runs, then replays its result', async () => {
    const key = newKey();
    const running = post(gw, chatBody('slow-chat'), { 'idempotency-key': key });
    await new Promise((r) => setTimeout(r, 150));
    const early = await post(gw, chatBody('slow-chat'), { 'idempotency-key': key });
    expect(early.status).toBe(409);
    expect(JSON.parse(early.text).error).toMatchObject({ type: 'invalid_request_error', code: 'idempotency_key_in_use', param: 'Idempotency-Key' });
    expect(early.headers.get('retry-after')).toBe('1');
    expect(early.headers.get('x-should-retry')).toBe('true');
    // Another body under the running key is refused as reuse, and not run.
    const charged = await charges(gw);
    const different = await post(gw, chatBody('slow-chat', 'something else'), { 'idempotency-key': key });
    expect(different.status).toBe(409);
    expect(errorCode(different)).toBe('idempotency_key_reused');
    expect(JSON.parse(different.text).error.message).toContain(JSON.parse(early.text).error.message.match(/req_[0-9a-f]+/)[0]);

    const first = await running;
    expect(first.status).toBe(200);
    // Only the first ran: one charge in all.
    expect(await charges(gw)).toBe(charged + 1);
    const later = await post(gw, chatBody('slow-chat'), { 'idempotency-key': key });
    expect(later.text).toBe(first.text);
    expect(isReplay(later)).toBe(true);
  });

  it('records a stream and replays the same frames; a resend during the stream is 409 in flight', async () => {
    const key = newKey();
    const body = chatBody('slow-chat', 'tell me a story please', { stream: true, stream_options: { include_usage: true } });
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const during = await post(gw, body, { 'idempotency-key': key });
    expect(during.status).toBe(409);
    expect(errorCode(during)).toBe('idempotency_key_in_use');
    const original = await res.text();
    expect(original.endsWith('data: [DONE]\n\n')).toBe(true);
    const charged = await charges(gw);

    const replay = await post(gw, body, { 'idempotency-key': key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(replay.text).toBe(original);
    expect(isReplay(replay)).toBe(true);
    expect(await charges(gw)).toBe(charged);
  });

  it('refuses a malformed Idempotency-Key with 400 naming the header, before running anything', async () => {
    const charged = await charges(gw);
    for (const bad of ['k'.repeat(256), 'two words', '"unterminated']) {
      const answer = await post(gw, chatBody(), { 'idempotency-key': bad });
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.text).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_idempotency_key', param: 'Idempotency-Key' });
      expect(JSON.parse(answer.text).error.message).toContain('Idempotency-Key');
    }
    expect(await charges(gw)).toBe(charged);
  });

  it('scopes keys to their account: the same key and body run once for each account', async () => {
    const key = newKey();
    const mine = await post(gw, chatBody(), { 'idempotency-key': key });
    const theirs = await post(gw, chatBody(), { 'idempotency-key': key }, gw.keys.other);
    expect(mine.status).toBe(200);
    expect(theirs.status).toBe(200);
    expect(isReplay(theirs)).toBe(false);
    expect(theirs.text).not.toBe(mine.text);
    expect(await charges(gw, 'other')).toBeGreaterThan(0);
  });

  it('does not record a 502: the resend is a new attempt and succeeds through another route', async () => {
    const key = newKey();
    const failed = await post(gw, chatBody('flaky-chat'), { 'idempotency-key': key });
    expect(failed.status).toBe(502);
    expect(errorCode(failed)).toBe('upstream_error');
    const retried = await post(gw, chatBody('flaky-chat'), { 'idempotency-key': key });
    expect(retried.status).toBe(200);
    expect(isReplay(retried)).toBe(false);
    const again = await post(gw, chatBody('flaky-chat'), { 'idempotency-key': key });
    expect(again.text).toBe(retried.text);
    expect(isReplay(again)).toBe(true);
  });

  it('records an outcome once execution began, a 4xx included: the resend gets the same 400 back', async () => {
    const key = newKey();
    const rejected = await post(gw, chatBody('picky-chat'), { 'idempotency-key': key });
    expect(rejected.status).toBe(400);
    expect(errorCode(rejected)).toBe('upstream_rejected_request');
    // The provider would now accept it (it fails once only): a replay is the only way to get the 400 again.
    const resent = await post(gw, chatBody('picky-chat'), { 'idempotency-key': key });
    expect(resent.status).toBe(400);
    expect(resent.text).toBe(rejected.text);
    expect(isReplay(resent)).toBe(true);
    expect(resent.headers.get('x-should-retry')).toBe('false');
  });

  it('replays a recorded Responses API error as it was answered, in the Responses request\'s terms', async () => {
    const key = newKey();
    const send = async (): Promise<Answer> => {
      const res = await fetch(`${gw.baseURL}/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ model: 'picky-terms-chat', input: 'hello', max_output_tokens: 50 }),
      });
      return { status: res.status, headers: res.headers, text: await res.text() };
    };
    const rejected = await send();
    expect([rejected.status, errorCode(rejected)]).toEqual([400, 'upstream_rejected_request']);
    const message = (JSON.parse(rejected.text) as { error: { message: string } }).error.message;
    expect(message).toContain('max_output_tokens is too large for input');
    const resent = await send();
    expect([isReplay(resent), resent.text]).toEqual([true, rejected.text]);
  });

  it('does not record a 500: it says retry, and the resend with the same key runs again', async () => {
    const key = newKey();
    const crashed = await post(gw, chatBody('crashy-chat'), { 'idempotency-key': key });
    expect(crashed.status).toBe(500);
    expect(crashed.headers.get('x-should-retry')).toBe('true');
    const retried = await post(gw, chatBody('crashy-chat'), { 'idempotency-key': key });
    expect(retried.status).toBe(200);
    expect(isReplay(retried)).toBe(false);
    const again = await post(gw, chatBody('crashy-chat'), { 'idempotency-key': key });
    expect(isReplay(again)).toBe(true);
    expect(again.text).toBe(retried.text);
  });

  it('does not record a 408: the resend with the same key, given more time, runs and succeeds', async () => {
    const key = newKey();
    const body = chatBody('slow-chat');
    const timedOut = await post(gw, body, { 'idempotency-key': key, 'x-generation-budget-ms': '100' });
    expect(timedOut.status).toBe(408);
    expect(timedOut.headers.get('x-should-retry')).toBe('true');
    const retried = await post(gw, body, { 'idempotency-key': key });
    expect(retried.status).toBe(200);
    expect(isReplay(retried)).toBe(false);
  });

  it('binds the key to a request an adapter refused before sending it upstream: the same one runs again, another is a reuse', async () => {
    const key = newKey();
    // Anthropic cannot make several choices: the adapter refuses n=2 without calling the provider.
    const refused = await post(gw, chatBody('claude-chat', 'hi', { n: 2 }), { 'idempotency-key': key });
    expect(refused.status).toBe(422);
    expect(errorCode(refused)).toBe('incompatible_parameters');
    const again = await post(gw, chatBody('claude-chat', 'hi', { n: 2 }), { 'idempotency-key': key });
    expect([again.status, isReplay(again)]).toEqual([422, false]);
    const corrected = await post(gw, chatBody('claude-chat', 'hi'), { 'idempotency-key': key });
    expect(corrected.status).toBe(409);
    expect(errorCode(corrected)).toBe('idempotency_key_reused');
  });

  it('records no 400 an adapter gives before sending anything: the identical resend runs again rather than being replayed', async () => {
    const key = newKey();
    // Anthropic takes a tool call's arguments as an object: text that is not JSON is refused by the adapter, before the provider.
    const body = {
      model: 'claude-chat',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: 'not json' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'found' },
      ],
    };
    const refused = await post(gw, body, { 'idempotency-key': key });
    expect([refused.status, errorCode(refused)]).toEqual([400, 'invalid_parameter']);
    const again = await post(gw, body, { 'idempotency-key': key });
    expect([again.status, errorCode(again), isReplay(again)]).toEqual([400, 'invalid_parameter', false]);
  });

  it('binds the key to a request refused before it ran: resent, it runs again; corrected, it needs a new key (spec 4)', async () => {
    const key = newKey();
    const invalid = await post(gw, { model: 'mock-chat' }, { 'idempotency-key': key });
    expect(invalid.status).toBe(400);
    expect(errorCode(invalid)).toBe('missing_required_parameter');
    const again = await post(gw, { model: 'mock-chat' }, { 'idempotency-key': key });
    expect(again.status).toBe(400);
    expect(isReplay(again)).toBe(false);
    const corrected = await post(gw, chatBody(), { 'idempotency-key': key });
    expect(corrected.status).toBe(409);
    expect(errorCode(corrected)).toBe('idempotency_key_reused');
    const fresh = await post(gw, chatBody(), { 'idempotency-key': newKey() });
    expect(fresh.status).toBe(200);
    // The binding lives apart from the key's record: an instance of an earlier version, which
    // reads only the record, never replays a binding as a response.
    const id = idempotencyRecordId('acct', key);
    expect(await gw.gateway.store.getIdempotencyRecord(id, Date.now())).toBeUndefined();
    expect(await gw.gateway.store.getIdempotencyRecord(bindingRecordId(id), Date.now())).toMatchObject({ status: 0, body: Buffer.alloc(0) });
  });

  it('binds the key to a request whose retryable failure was not recorded: the same request runs again and may succeed', async () => {
    const key = newKey();
    const body = chatBody('slow-chat');
    const timedOut = await post(gw, body, { 'idempotency-key': key, 'x-generation-budget-ms': '100' });
    expect(timedOut.status).toBe(408);
    const other = await post(gw, chatBody('mock-chat', 'something else'), { 'idempotency-key': key });
    expect([other.status, errorCode(other)]).toEqual([409, 'idempotency_key_reused']);
    const retried = await post(gw, body, { 'idempotency-key': key });
    expect([retried.status, isReplay(retried)]).toEqual([200, false]);
    // Now recorded: replayed.
    const replayed = await post(gw, body, { 'idempotency-key': key });
    expect([replayed.status, isReplay(replayed)]).toEqual([200, true]);
  });

  it('lets the immediate resend of a stream that ended in a retryable error frame run, not meet the key in use', async () => {
    for (let i = 0; i < 5; i++) {
      const key = newKey();
      const body = chatBody('cut-chat', 'one two three four five six', { stream: true });
      const first = await post(gw, body, { 'idempotency-key': key });
      expect(first.text).toContain('"error"');
      const resent = await post(gw, body, { 'idempotency-key': key });
      // It runs (the gateway may route it away from the route that just failed it: a 503 here).
      expect(resent.status === 409 ? errorCode(resent) : 'ran').toBe('ran');
      expect(isReplay(resent)).toBe(false);
    }
  });

  it('counts a replay against requests per minute, and against nothing else', async () => {
    const key = newKey();
    const apiKey = gw.keys.limited!;
    const first = await post(gw, chatBody(), { 'idempotency-key': key }, apiKey);
    expect(first.status).toBe(200);
    // The daily cap (1) is used up: a new request is refused, a replay is not.
    const fresh = await post(gw, chatBody('mock-chat', 'new question'), { 'idempotency-key': newKey() }, apiKey);
    expect(fresh.status).toBe(429);
    expect(errorCode(fresh)).toBe('daily_cap_exceeded');
    const replay = await post(gw, chatBody(), { 'idempotency-key': key }, apiKey);
    expect(replay.status).toBe(200);
    expect(isReplay(replay)).toBe(true);
    expect(replay.headers.get('x-ratelimit-remaining')).toBe('0');
    // It carries the token headers too, and uses no tokens: as many remain as before it.
    expect(replay.headers.get('x-ratelimit-limit-tokens')).toBe('1000000');
    expect(replay.headers.get('x-ratelimit-remaining-tokens')).toBe(fresh.headers.get('x-ratelimit-remaining-tokens'));
    // Three requests were counted this minute: the fourth, a replay too, is refused.
    const over = await post(gw, chatBody(), { 'idempotency-key': key }, apiKey);
    expect(over.status).toBe(429);
    expect(errorCode(over)).toBe('requests_per_minute_exceeded');
  });

  it('runs and charges once for a resend storm from many concurrent clients', async () => {
    const key = newKey();
    const charged = await charges(gw);
    const answers = await Promise.all(Array.from({ length: 30 }, () => post(gw, chatBody('slow-chat', 'storm'), { 'idempotency-key': key })));
    const executed = answers.filter((a) => a.status === 200 && !isReplay(a));
    expect(executed).toHaveLength(1);
    for (const answer of answers.filter((a) => a !== executed[0])) {
      if (answer.status === 200) expect(answer.text).toBe(executed[0]!.text);
      else expect(errorCode(answer)).toBe('idempotency_key_in_use');
    }
    expect(await charges(gw)).toBe(charged + 1);
  });

  it('gives every official SDK client of a storm the one result, retrying the 409 by itself', async () => {
    const key = newKey();
    const charged = await charges(gw);
    const clients = Array.from({ length: 8 }, () => new OpenAI({ apiKey: gw.keys.main!, baseURL: gw.baseURL, maxRetries: 4 }));
    const completions = await Promise.all(
      clients.map((client) =>
        client.chat.completions.create({ model: 'slow-chat', messages: [{ role: 'user', content: 'sdk storm' }], max_tokens: 50 }, { headers: { 'Idempotency-Key': key } }),
      ),
    );
    expect(new Set(completions.map((c) => c.id)).size).toBe(1);
    expect(await charges(gw)).toBe(charged + 1);
  });

  it('keeps running a request whose caller left, and replays the whole answer to its resend', async () => {
    const key = newKey();
    const body = chatBody('slow-chat', 'one two three four five six seven', { stream: true });
    const controller = new AbortController();
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    const charged = await charges(gw);

    const replay = await resendUntilDone(() => post(gw, body, { 'idempotency-key': key }));
    expect(replay.status).toBe(200);
    expect(isReplay(replay)).toBe(true);
    expect(replay.text).toContain('one two three four five six seven'.split(' ').at(-1));
    expect(replay.text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(await charges(gw)).toBe(charged + 1);
  });

  it('runs a key again once its record expired', async () => {
    // Storage of its own: one SQLite database serves one gateway process.
    const short = await start({ idempotency: { ...(shared ? { backend: 'redis' } : {}), lifetime_ms: 1_000 } }, await backend.storage());
    try {
      const key = newKey();
      const first = await post(short, chatBody(), { 'idempotency-key': key });
      await new Promise((r) => setTimeout(r, 1_100));
      const second = await post(short, chatBody(), { 'idempotency-key': key });
      expect(second.status).toBe(200);
      expect(isReplay(second)).toBe(false);
      expect(second.text).not.toBe(first.text);
      const third = await post(short, chatBody(), { 'idempotency-key': key });
      expect(third.text).toBe(second.text);
    } finally {
      await short.close();
    }
  });

  it('finishes, charges and records a request whose caller left, before a shutdown completes', async () => {
    const own = await backend.storage();
    const before = await start({}, own);
    const key = newKey();
    const body = chatBody('slow-chat', 'one two three four five six seven eight', { stream: true });
    try {
      const controller = new AbortController();
      const res = await fetch(`${before.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${before.keys.main}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      await res.body!.getReader().read();
      controller.abort();
    } finally {
      await before.close();
    }
    const after = await start({}, own, before.keys);
    try {
      expect(await charges(after)).toBe(1);
      const resent = await post(after, body, { 'idempotency-key': key });
      expect(isReplay(resent)).toBe(true);
      expect(resent.text).toContain('eight');
      expect(resent.text.endsWith('data: [DONE]\n\n')).toBe(true);
    } finally {
      await after.close();
    }
  });

  it('cancels such a request at the drain deadline: what it delivered is charged, nothing recorded, the resend runs again', async () => {
    const own = await backend.storage();
    const before = await start({ server: { shutdown_timeout_ms: 300 } }, own);
    const key = newKey();
    const body = chatBody('slow-chat', Array.from({ length: 30 }, (_, i) => `word${i}`).join(' '), { stream: true });
    try {
      const controller = new AbortController();
      const res = await fetch(`${before.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${before.keys.main}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      await res.body!.getReader().read();
      controller.abort();
    } finally {
      await before.close();
    }
    const after = await start({}, own, before.keys);
    try {
      expect(await charges(after)).toBe(1);
      const resent = await post(after, body, { 'idempotency-key': key });
      expect(resent.status).toBe(200);
      expect(isReplay(resent)).toBe(false);
    } finally {
      await after.close();
    }
  });

  it('keeps its records over a restart of the gateway', async () => {
    const own = await backend.storage();
    const before = await start({}, own);
    const key = newKey();
    let first: Answer;
    try {
      first = await post(before, chatBody(), { 'idempotency-key': key });
      expect(first.status).toBe(200);
    } finally {
      await before.close();
    }
    const after = await start({}, own, before.keys);
    try {
      const resent = await post(after, chatBody(), { 'idempotency-key': key });
      expect(resent.text).toBe(first.text);
      expect(isReplay(resent)).toBe(true);
    } finally {
      await after.close();
    }
  });
});

describe('Idempotency-Key across instances (Redis claims over PostgreSQL)', () => {
  const backend = BACKENDS[1]!;
  beforeAll(() => {
    if (!sharedUp) throw new Error('Redis and PostgreSQL are required for this test');
  });

  it('runs a key once when two instances receive it at the same instant', async () => {
    const storage = await backend.storage();
    const start = (presetKeys?: Record<string, string>) =>
      startGateway({ accounts: ACCOUNTS, keys: KEYS, ...(presetKeys ? { presetKeys } : {}), config: { ...BASE_CONFIG, ...backend.options(storage) } });
    const gw = await start();
    const other = await start(gw.keys);
    try {
      const key = newKey();
      const charged = await charges(gw);
      const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => post(i % 2 === 0 ? gw : other, chatBody('slow-chat', 'two instances'), { 'idempotency-key': key })));
      const executed = answers.filter((a) => a.status === 200 && !isReplay(a));
      expect(executed).toHaveLength(1);
      expect(answers.every((a) => a.status === 200 || errorCode(a) === 'idempotency_key_in_use')).toBe(true);
      expect(await charges(gw)).toBe(charged + 1);
      const replayed = await post(other, chatBody('slow-chat', 'two instances'), { 'idempotency-key': key });
      expect(replayed.text).toBe(executed[0]!.text);
    } finally {
      await other.close();
      await gw.close();
    }
  });
});

describe('Idempotency-Key while the claims Redis is unreachable', () => {
  it('refuses requests with a key with 503 idempotency_unavailable, and serves the others', async () => {
    const gw = await startGateway({ accounts: ACCOUNTS, keys: KEYS, config: { ...BASE_CONFIG, idempotency: { backend: 'redis' }, redis: { url: 'redis://127.0.0.1:1', key_prefix: uniquePrefix(), command_timeout_ms: 100 } } });
    try {
      const keyed = await post(gw, chatBody(), { 'idempotency-key': newKey() });
      expect(keyed.status).toBe(503);
      expect(JSON.parse(keyed.text).error).toMatchObject({ type: 'service_unavailable', code: 'idempotency_unavailable' });
      expect(keyed.headers.get('retry-after')).toBe('1');
      const plain = await post(gw, chatBody(), {});
      expect(plain.status).toBe(200);
      expect(await charges(gw)).toBe(1);
    } finally {
      await gw.close();
    }
  });
});
