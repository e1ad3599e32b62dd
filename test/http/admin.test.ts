/**
 * The admin API under /admin/v1 on a real listening gateway: the admin token, accounts, credits
 * and their ledger, API keys (which take effect on /v1 at once), usage reports, and every error in
 * the gateway's envelope. After every test, each account's balance equals the sum of its ledger.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, isEnvelope, MOCK_MODEL, startGateway, type RunningGateway } from '../support/gateway-harness.js';
import type { Settlement } from '../../src/storage/types.js';
import { generateApiKey } from '../../src/auth/api-key.js';

const TOKEN = 'admin-token-for-the-tests-0123456789';
let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({
    config: {
      server: { admin_token: TOKEN },
      models: [
        MOCK_MODEL,
        { id: 'other-chat', capabilities: ['chat', 'streaming'], context_window: 4096, routes: [{ provider: 'mock', model: 'm' }] },
        // 1 credit per million tokens either way, so that a request's worst case costs something.
        { id: 'priced-chat', capabilities: ['chat', 'streaming'], context_window: 4096, max_output_tokens: 100, price: { input_per_million_tokens: 10000, output_per_million_tokens: 10000 }, routes: [{ provider: 'mock', model: 'm' }] },
      ],
      tiers: { standard: { models: ['*'] }, restricted: { models: ['other-*'] } },
    },
  });
});
afterAll(() => gw.close());

afterEach(async () => {
  for (const account of await gw.gateway.store.listAccounts()) {
    expect(await gw.gateway.store.ledgerSum(account.id), `ledger sum of ${account.id}`).toBe(account.balanceMicros);
  }
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answers are JSON, checked by value.
type Json = Record<string, any>;

function admin(method: string, path: string, body?: unknown, token: string | null = TOKEN): Promise<Response> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${gw.url}/admin/v1${path}`, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
}

async function ok(response: Promise<Response>, status = 200): Promise<Json> {
  const res = await response;
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return { ...(JSON.parse(text) as Json), _requestId: res.headers.get('x-request-id') };
}

async function fails(response: Promise<Response>, status: number, code: string, param?: string | null): Promise<Json> {
  const { status: actual, requestId, body } = await errorOf(await response);
  expect(actual, JSON.stringify(body)).toBe(status);
  expect(requestId).toMatch(/^req_/);
  expect(isEnvelope(body)).toBe(true);
  expect(body.error.code).toBe(code);
  if (param !== undefined) expect(body.error.param).toBe(param);
  return body.error;
}

const chat = (key: string, model = 'mock-chat') =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 }),
  });

let seq = 0;
async function newAccount(credits = 10, tier = 'standard'): Promise<string> {
  const id = `acct-${++seq}`;
  await ok(admin('POST', '/accounts', { id, tier, credits }), 201);
  return id;
}
async function newKey(account: string, body: unknown = {}): Promise<Json> {
  return ok(admin('POST', `/accounts/${account}/keys`, body), 201);
}

describe('the admin token', () => {
  it.each([
    ['no Authorization header', null],
    ['a wrong token', 'not-the-admin-token-at-all'],
    ['the token with one character changed', `${TOKEN.slice(0, -1)}x`],
  ])('refuses %s with 401 invalid_admin_token', async (_what, token) => {
    const error = await fails(admin('GET', '/accounts', undefined, token), 401, 'invalid_admin_token', null);
    expect(error.type).toBe('authentication_error');
  });

  it('refuses a Basic scheme and an API key', async () => {
    const basic = await fetch(`${gw.url}/admin/v1/accounts`, { headers: { authorization: `Basic ${Buffer.from(`admin:${TOKEN}`).toString('base64')}` } });
    await fails(Promise.resolve(basic), 401, 'invalid_admin_token');
    await fails(admin('GET', '/accounts', undefined, gw.keys.main), 401, 'invalid_admin_token');
  });

  it('is checked before the body is read, and says nothing about the routes', async () => {
    await fails(admin('POST', '/accounts', '{not json', null), 401, 'invalid_admin_token');
    await fails(admin('GET', '/accounts/acct', undefined, 'wrong-token-wrong-token'), 401, 'invalid_admin_token');
  });

  it('does not open /v1 to the admin token', async () => {
    const res = await fetch(`${gw.baseURL}/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(401);
  });

  it('refuses query parameters on routes that take none, naming the parameter, and does nothing', async () => {
    await fails(admin('POST', '/accounts?dry_run=true', JSON.stringify({ id: 'never-made', tier: 'standard' })), 400, 'invalid_parameter', 'dry_run');
    await fails(admin('GET', '/accounts/never-made'), 404, 'account_not_found');
    await fails(admin('GET', '/accounts?limit=1'), 400, 'invalid_parameter', 'limit');
    await fails(admin('DELETE', '/keys/x?force=1'), 400, 'invalid_parameter', 'force');
  });

  it('refuses an account id shaped like an API key without repeating it, and a scope of no models', async () => {
    const { key: keyShaped } = generateApiKey();
    const refused = await fails(admin('POST', '/accounts', { id: keyShaped, tier: 'standard' }), 400, 'invalid_parameter', 'id');
    expect(JSON.stringify(refused)).not.toContain(keyShaped.slice(-20));
    const account = await newAccount();
    await fails(admin('POST', `/accounts/${account}/keys`, { scope: { models: [] } }), 400, 'invalid_parameter', 'scope.models');
  });

  it('answers unknown admin paths 404 route_not_found and wrong methods with Allow', async () => {
    await fails(admin('GET', '/nothing-here'), 404, 'route_not_found');
    const res = await admin('PUT', '/accounts');
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
    await fails(Promise.resolve(res), 404, 'route_not_found');
  });

  it('without server.admin_token, every admin path is 404 admin_api_disabled', async () => {
    const plain = await startGateway();
    try {
      for (const [method, path] of [['GET', '/admin/v1/accounts'], ['POST', '/admin/v1/accounts/acct/topups'], ['GET', '/admin/v1'], ['DELETE', '/admin/v1/keys/x']] as const) {
        const res = await fetch(`${plain.url}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` } });
        const error = await fails(Promise.resolve(res), 404, 'admin_api_disabled');
        expect(error.message).toContain('server.admin_token');
      }
      // Before the body: a malformed one is no reason to answer otherwise.
      const malformed = await fetch(`${plain.url}/admin/v1/accounts`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{' });
      await fails(Promise.resolve(malformed), 404, 'admin_api_disabled');
      expect((await plain.gateway.store.listAccounts()).map((a): unknown => a.id)).toEqual(['acct']);
    } finally {
      await plain.close();
    }
  });
});

describe('accounts', () => {
  it('creates an account with opening credit recorded in the ledger under the request id', async () => {
    const created = await ok(admin('POST', '/accounts', { id: 'team-search', name: 'Search team', tier: 'standard', credits: 12.5 }), 201);
    expect(created).toMatchObject({ object: 'account', id: 'team-search', name: 'Search team', tier: 'standard', balance: 12.5, balance_micros: 12_500_000 });
    expect(new Date(created.created_at as string).toISOString()).toBe(created.created_at);
    const ledger = await ok(admin('GET', '/accounts/team-search/ledger'));
    expect(ledger).toMatchObject({ object: 'list', account_id: 'team-search', balance: 12.5, balance_micros: 12_500_000, has_more: false });
    expect(ledger.data).toHaveLength(1);
    expect(ledger.data[0]).toMatchObject({ object: 'ledger_entry', kind: 'topup', amount: 12.5, amount_micros: 12_500_000, request_id: created._requestId, note: 'opening credit', api_key_id: null });
  });

  it('creates an account without credit (no ledger entry) and without a name', async () => {
    const created = await ok(admin('POST', '/accounts', { id: 'empty-acct', tier: 'restricted' }), 201);
    expect(created).toMatchObject({ name: null, tier: 'restricted', balance: 0, balance_micros: 0 });
    expect((await ok(admin('GET', '/accounts/empty-acct/ledger'))).data).toEqual([]);
  });

  it('refuses an id that exists, 409 account_already_exists, without crediting it again', async () => {
    const id = await newAccount(3);
    await fails(admin('POST', '/accounts', { id, tier: 'standard', credits: 1000 }), 409, 'account_already_exists', 'id');
    await fails(admin('POST', '/accounts', { id: 'acct', tier: 'standard' }), 409, 'account_already_exists', 'id');
    expect((await ok(admin('GET', `/accounts/${id}`))).balance_micros).toBe(3_000_000);
  });

  it.each([
    [{ id: 'x1', tier: 'gold' }, 'invalid_parameter', 'tier', 'not a configured tier (configured: standard, restricted)'],
    [{ id: 'x1' }, 'missing_required_parameter', 'tier', "'tier'"],
    [{ tier: 'standard' }, 'missing_required_parameter', 'id', "'id'"],
    [{ id: 'has space', tier: 'standard' }, 'invalid_parameter', 'id', 'letters, digits'],
    [{ id: '', tier: 'standard' }, 'invalid_parameter', 'id', undefined],
    [{ id: 'x1', tier: 'standard', credits: -1 }, 'invalid_parameter', 'credits', 'at least 0'],
    [{ id: 'x1', tier: 'standard', credits: '5' }, 'invalid_parameter', 'credits', 'must be a number'],
    [{ id: 'x1', tier: 'standard', credits: 0.0000001 }, 'invalid_parameter', 'credits', '6 decimal places'],
    [{ id: 'x1', tier: 'standard', credits: 2e9 }, 'invalid_parameter', 'credits', undefined],
    [{ id: 'x1', tier: 'standard', teir: 'standard' }, 'invalid_parameter', 'teir', "Unknown field 'teir'"],
    [{ id: 'x1', tier: 'standard', name: 5 }, 'invalid_parameter', 'name', undefined],
  ])('refuses %j with 400 %s naming %s', async (body, code, param, text) => {
    const error = await fails(admin('POST', '/accounts', body), 400, code, param);
    if (text !== undefined) expect(error.message).toContain(text);
    await fails(admin('GET', '/accounts/x1'), 404, 'account_not_found');
  });

  it('refuses bodies that are not a JSON object', async () => {
    await fails(admin('POST', '/accounts', '{"id":'), 400, 'invalid_json');
    await fails(admin('POST', '/accounts', [1, 2]), 400, 'invalid_parameter', null);
    await fails(admin('POST', '/accounts'), 400, 'invalid_parameter', null);
    const text = await fetch(`${gw.url}/admin/v1/accounts`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' }, body: 'id=x' });
    await fails(Promise.resolve(text), 400, 'unsupported_content_type');
  });

  it('lists accounts with balances, and shows one', async () => {
    const id = await newAccount(7.25);
    const list = await ok(admin('GET', '/accounts'));
    expect(list.object).toBe('list');
    const ids = (list.data as Json[]).map((a): unknown => a.id);
    expect(ids).toContain('acct');
    expect(ids).toContain(id);
    expect((list.data as Json[]).find((a) => a.id === id)).toMatchObject({ balance: 7.25, balance_micros: 7_250_000 });
    expect(await ok(admin('GET', `/accounts/${id}`))).toMatchObject({ object: 'account', id, balance: 7.25 });
    await fails(admin('GET', '/accounts/nobody'), 404, 'account_not_found', null);
  });

  it('takes ids with a slash, URL-encoded in paths', async () => {
    await ok(admin('POST', '/accounts', { id: 'org/team', tier: 'standard', credits: 1 }), 201);
    expect(await ok(admin('GET', '/accounts/org%2Fteam'))).toMatchObject({ id: 'org/team', balance: 1 });
    await ok(admin('POST', '/accounts/org%2Fteam/topups', { credits: 1 }), 201);
    const longId = `a${'b'.repeat(127)}`;
    await ok(admin('POST', '/accounts', { id: longId, tier: 'standard' }), 201);
    expect((await ok(admin('GET', `/accounts/${longId}`))).id).toBe(longId);
  });

  it('changes the name and tier; refuses unknown tiers, empty changes and unknown accounts', async () => {
    const id = await newAccount();
    expect(await ok(admin('PATCH', `/accounts/${id}`, { name: 'Renamed' }))).toMatchObject({ name: 'Renamed', tier: 'standard' });
    expect(await ok(admin('PATCH', `/accounts/${id}`, { tier: 'restricted', name: null }))).toMatchObject({ name: null, tier: 'restricted' });
    await fails(admin('PATCH', `/accounts/${id}`, { tier: 'platinum' }), 400, 'invalid_parameter', 'tier');
    await fails(admin('PATCH', `/accounts/${id}`, {}), 400, 'invalid_parameter', null);
    await fails(admin('PATCH', `/accounts/${id}`, { credits: 5 }), 400, 'invalid_parameter', 'credits');
    await fails(admin('PATCH', '/accounts/nobody', { tier: 'standard' }), 404, 'account_not_found');
    expect((await ok(admin('GET', `/accounts/${id}`))).tier).toBe('restricted');
  });

  it('applies a tier change to the next /v1 request of the account keys', async () => {
    const id = await newAccount();
    const { key } = await newKey(id);
    expect((await chat(key as string)).status).toBe(200);
    await ok(admin('PATCH', `/accounts/${id}`, { tier: 'restricted' }));
    const refused = await errorOf(await chat(key as string));
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'model_not_allowed' });
    expect(refused.body.error.message).toContain('restricted');
    expect((await chat(key as string, 'other-chat')).status).toBe(200);
    await ok(admin('PATCH', `/accounts/${id}`, { tier: 'standard' }));
    expect((await chat(key as string)).status).toBe(200);
  });
});

describe('credits: top-ups, adjustments and the ledger', () => {
  it('tops up: the balance moves, the ledger gets a topup entry under the admin request id', async () => {
    const id = await newAccount(1);
    const change = await ok(admin('POST', `/accounts/${id}/topups`, { credits: 2.5, note: 'invoice 42' }), 201);
    expect(change.object).toBe('balance_change');
    expect(change.account).toMatchObject({ id, balance: 3.5, balance_micros: 3_500_000 });
    expect(change.entry).toMatchObject({ object: 'ledger_entry', account_id: id, kind: 'topup', amount: 2.5, amount_micros: 2_500_000, request_id: change._requestId, note: 'invoice 42' });
    const ledger = await ok(admin('GET', `/accounts/${id}/ledger`));
    expect((ledger.data as Json[]).map((e): unknown => [e.kind, e.amount_micros])).toEqual([['topup', 2_500_000], ['topup', 1_000_000]]);
    expect(ledger.balance_micros).toBe(3_500_000);
  });

  it('adds decimal credits exactly', async () => {
    const id = await newAccount(0);
    for (let i = 0; i < 3; i++) await ok(admin('POST', `/accounts/${id}/topups`, { credits: 0.1 }), 201);
    expect(await ok(admin('GET', `/accounts/${id}`))).toMatchObject({ balance_micros: 300_000, balance: 0.3 });
  });

  it('reads credits as the body wrote them, not as the double they parse to', async () => {
    const id = await newAccount(0);
    // JSON.parse reads 1.0000000000000001 as exactly 1: only its text shows the sixteen decimals.
    for (const body of ['{"credits": 1.0000000000000001}', '{"credits": 1e-7}', '{"note": "x", "credits": 0.99999999999999999999}']) {
      const refused = await fails(admin('POST', `/accounts/${id}/topups`, body), 400, 'invalid_parameter', 'credits');
      expect(refused.message, body).toContain('at most 6 decimal places');
    }
    await fails(admin('POST', '/accounts', '{"id": "precise-acct", "tier": "standard", "credits": 5.0000000000000001}'), 400, 'invalid_parameter', 'credits');
    await fails(admin('GET', '/accounts/precise-acct'), 404, 'account_not_found');
    // Numbers elsewhere in the body, even in a string that looks like the member, are not the amount.
    const change = await ok(admin('POST', `/accounts/${id}/adjustments`, String.raw`{"note": "\"credits\": 1.0000000000000001", "credits": 0.25e1}`), 201);
    expect(change.entry).toMatchObject({ amount_micros: 2_500_000, note: '"credits": 1.0000000000000001' });
    await ok(admin('POST', `/accounts/${id}/topups`, '{"credits": 1.500000000000000000000}'), 201);
    expect((await ok(admin('GET', `/accounts/${id}`))).balance_micros).toBe(4_000_000);
  });

  it('refuses a change that would take the balance past what it holds exactly, writing nothing', async () => {
    const id = await newAccount(0);
    for (let i = 0; i < 9; i++) await ok(admin('POST', `/accounts/${id}/topups`, { credits: 1_000_000_000 }), 201);
    await fails(admin('POST', `/accounts/${id}/topups`, { credits: 0.000001 }), 400, 'invalid_parameter', 'credits');
    const ledger = await ok(admin('GET', `/accounts/${id}/ledger`));
    expect((ledger.data as Json[]).length).toBe(9);
    expect(ledger.balance_micros).toBe(9_000_000_000_000_000);
    await ok(admin('POST', `/accounts/${id}/adjustments`, { credits: -1 }), 201);
  });

  it('adjusts either way, even below zero', async () => {
    const id = await newAccount(2);
    const down = await ok(admin('POST', `/accounts/${id}/adjustments`, { credits: -0.75, note: 'refund of a mistaken top-up' }), 201);
    expect(down.entry).toMatchObject({ kind: 'adjustment', amount: -0.75, amount_micros: -750_000, request_id: down._requestId });
    expect(down.account.balance_micros).toBe(1_250_000);
    const up = await ok(admin('POST', `/accounts/${id}/adjustments`, { credits: 0.25 }), 201);
    expect(up.account.balance_micros).toBe(1_500_000);
    const debt = await ok(admin('POST', `/accounts/${id}/adjustments`, { credits: -2 }), 201);
    expect(debt.account).toMatchObject({ balance: -0.5, balance_micros: -500_000 });
  });

  it.each([
    ['topups', { credits: 0 }, 'invalid_parameter', 'credits'],
    ['topups', { credits: -5 }, 'invalid_parameter', 'credits'],
    ['topups', {}, 'missing_required_parameter', 'credits'],
    ['topups', { credits: 1, note: 7 }, 'invalid_parameter', 'note'],
    ['topups', { credits: 1, amount: 1 }, 'invalid_parameter', 'amount'],
    ['adjustments', { credits: 0 }, 'invalid_parameter', 'credits'],
    ['adjustments', { credits: 1.0000005 }, 'invalid_parameter', 'credits'],
  ])('%s refuses %j naming %s', async (kind, body, code, param) => {
    const id = await newAccount(1);
    await fails(admin('POST', `/accounts/${id}/${kind}`, body), 400, code, param);
    expect((await ok(admin('GET', `/accounts/${id}`))).balance_micros).toBe(1_000_000);
  });

  it('answers 404 for top-ups and ledgers of unknown accounts', async () => {
    await fails(admin('POST', '/accounts/nobody/topups', { credits: 1 }), 404, 'account_not_found');
    await fails(admin('POST', '/accounts/nobody/adjustments', { credits: 1 }), 404, 'account_not_found');
    await fails(admin('GET', '/accounts/nobody/ledger'), 404, 'account_not_found');
  });

  it('pages the ledger with limit, newest first', async () => {
    const id = await newAccount(1);
    await ok(admin('POST', `/accounts/${id}/topups`, { credits: 2 }), 201);
    await ok(admin('POST', `/accounts/${id}/adjustments`, { credits: -0.5 }), 201);
    const one = await ok(admin('GET', `/accounts/${id}/ledger?limit=1`));
    expect(one.data).toHaveLength(1);
    expect(one.has_more).toBe(true);
    const all = await ok(admin('GET', `/accounts/${id}/ledger?limit=3`));
    expect(all.has_more).toBe(false);
    expect((all.data as Json[]).map((e): unknown => e.amount)).toEqual([-0.5, 2, 1]);
    await fails(admin('GET', `/accounts/${id}/ledger?limit=0`), 400, 'invalid_parameter', 'limit');
    await fails(admin('GET', `/accounts/${id}/ledger?limit=1001`), 400, 'invalid_parameter', 'limit');
    await fails(admin('GET', `/accounts/${id}/ledger?limit=ten`), 400, 'invalid_parameter', 'limit');
    await fails(admin('GET', `/accounts/${id}/ledger?limt=10`), 400, 'invalid_parameter', 'limt');
  });

  it('reads a whole ledger page by page with after, through entries written in one millisecond', async () => {
    const id = await newAccount(1);
    // Charges settled in one batch are written with one time: only their ids order them.
    const charge = (requestId: string): Settlement => ({ requestId, charge: { accountId: id, kind: 'charge', amountMicros: -1, requestId, apiKeyId: 'k', note: null }, releaseReservation: false, usage: null });
    await gw.gateway.store.commitSettlements(Array.from({ length: 5 }, (_, i) => charge(`req_${id}_${i}`)));
    await ok(admin('POST', `/accounts/${id}/topups`, { credits: 2 }), 201);
    const whole = await ok(admin('GET', `/accounts/${id}/ledger`));
    const ids = (whole.data as Json[]).map((e): unknown => e.id);
    expect(ids).toHaveLength(7);
    expect(whole).toMatchObject({ first_id: ids[0], last_id: ids[6], has_more: false });

    const read: unknown[] = [];
    let after: string | null = null;
    for (let pages = 1; ; pages++) {
      const page = await ok(admin('GET', `/accounts/${id}/ledger?limit=2${after === null ? '' : `&after=${after}`}`));
      const data = page.data as Json[];
      read.push(...data.map((e): unknown => e.id));
      expect(page).toMatchObject({ first_id: data[0]?.id, last_id: data.at(-1)?.id, has_more: pages < 4, balance_micros: 2_999_995 });
      if (page.has_more !== true) break;
      after = page.last_id as string;
    }
    expect(read).toEqual(ids);
    expect(await ok(admin('GET', `/accounts/${id}/ledger?after=${String(ids[6])}`))).toMatchObject({ data: [], first_id: null, last_id: null, has_more: false });
  });

  it('refuses an after that is not an entry of the account, naming it', async () => {
    const id = await newAccount(1);
    const other = await newAccount(1);
    const entryOfOther = ((await ok(admin('GET', `/accounts/${other}/ledger`))).data as Json[])[0]!.id as string;
    const refused = await fails(admin('GET', `/accounts/${id}/ledger?after=${entryOfOther}`), 400, 'invalid_parameter', 'after');
    expect(refused.message).toContain(entryOfOther);
    await fails(admin('GET', `/accounts/${id}/ledger?after=le_${'0'.repeat(32)}`), 400, 'invalid_parameter', 'after');
    await fails(admin('GET', `/accounts/${id}/ledger?after=le_nonsense`), 400, 'invalid_parameter', 'after');
    await fails(admin('GET', `/accounts/${id}/ledger?after=`), 400, 'invalid_parameter', 'after');
    await fails(admin('GET', `/accounts/${id}/ledger?after=${entryOfOther}&after=${entryOfOther}`), 400, 'invalid_parameter', 'after');
    await fails(admin('GET', `/accounts/nobody/ledger?after=${entryOfOther}`), 404, 'account_not_found');
  });

  it('a top-up lets an account that could not pay be served at once', async () => {
    // priced-chat's worst case (prompt bound + 10 tokens at 0.01 credit each) is more than 0.01 credit.
    const id = await newAccount(0.01);
    const { key } = await newKey(id);
    const refused = await errorOf(await chat(key as string, 'priced-chat'));
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('insufficient_quota');
    await ok(admin('POST', `/accounts/${id}/topups`, { credits: 100 }), 201);
    const served = await chat(key as string, 'priced-chat');
    expect(served.status, await served.clone().text()).toBe(200);
    await served.text();
    const account = await ok(admin('GET', `/accounts/${id}`));
    expect(account.balance_micros).toBeLessThan(100_010_000);
  });
});

describe('API keys', () => {
  it('creates a key shown once, which works on /v1 at once; its hash never leaves', async () => {
    const id = await newAccount();
    const res = await admin('POST', `/accounts/${id}/keys`, { name: 'backend', scope: { models: ['mock-*'] } });
    const text = await res.clone().text();
    const created = await ok(Promise.resolve(res), 201);
    expect(created.key).toMatch(/^sk-tg-[A-Za-z0-9]{12}-[A-Za-z0-9]{40}$/);
    expect(created).toMatchObject({ object: 'api_key', account_id: id, name: 'backend', status: 'active', scope: { models: ['mock-*'] } });
    expect(created.key).toContain(`sk-tg-${created.id}-`);
    expect(created.redacted).toBe(`sk-tg-${created.id}-…`);
    const stored = await gw.gateway.store.getApiKey(created.id as string);
    expect(text).not.toContain(stored!.secretHash);
    expect(text).not.toMatch(/secret|hash/i);

    expect((await chat(created.key as string)).status).toBe(200);

    const shown = await ok(admin('GET', `/keys/${created.id}`));
    expect(shown).toMatchObject({ id: created.id, account_id: id, name: 'backend' });
    expect(shown).not.toHaveProperty('key');
    const list = await ok(admin('GET', `/accounts/${id}/keys`));
    expect((list.data as Json[]).map((k): unknown => k.id)).toEqual([created.id]);
    expect(JSON.stringify(list)).not.toContain(stored!.secretHash);
    expect(JSON.stringify(list)).not.toContain(created.key);
  });

  it('creates a key with no body at all', async () => {
    const id = await newAccount();
    const created = await ok(admin('POST', `/accounts/${id}/keys`), 201);
    expect(created).toMatchObject({ name: null, scope: null, status: 'active' });
  });

  it('disables a key: the next request is 401 api_key_disabled; enabling it serves again', async () => {
    const id = await newAccount();
    const { key, id: keyId } = await newKey(id);
    expect((await chat(key as string)).status).toBe(200);
    expect(await ok(admin('PATCH', `/keys/${keyId}`, { status: 'disabled' }))).toMatchObject({ status: 'disabled' });
    const refused = await errorOf(await chat(key as string));
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('api_key_disabled');
    await ok(admin('PATCH', `/keys/${keyId}`, { status: 'active' }));
    expect((await chat(key as string)).status).toBe(200);
  });

  it('sets and clears a scope and renames, keeping what the change does not name', async () => {
    const id = await newAccount();
    const { key, id: keyId } = await newKey(id, { name: 'first' });
    const scoped = await ok(admin('PATCH', `/keys/${keyId}`, { scope: { models: ['other-*'], endpoints: ['chat/completions'] } }));
    expect(scoped).toMatchObject({ name: 'first', status: 'active', scope: { models: ['other-*'], endpoints: ['chat/completions'] } });
    const refused = await errorOf(await chat(key as string));
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('model_not_allowed');
    expect((await chat(key as string, 'other-chat')).status).toBe(200);
    expect(await ok(admin('PATCH', `/keys/${keyId}`, { scope: null, name: 'second' }))).toMatchObject({ scope: null, name: 'second' });
    expect((await chat(key as string)).status).toBe(200);
  });

  it.each([
    [{ status: 'revoked' }, 'status'],
    [{ scope: { colour: ['red'] } }, 'scope.colour'],
    [{ scope: { models: 'gpt-4o' } }, 'scope.models'],
    [{ scope: { models: [''] } }, 'scope.models[0]'],
    [{ scope: { endpoints: ['chat/completion', 'moderations'] } }, 'scope.endpoints'],
    [{ scope: { sdks: ['openai-node'] } }, 'scope.sdks'],
    [{ account_id: 'other' }, 'account_id'],
    [{}, null],
  ])('refuses the key change %j naming %s', async (body, param) => {
    const id = await newAccount();
    const { id: keyId } = await newKey(id);
    await fails(admin('PATCH', `/keys/${keyId}`, body), 400, 'invalid_parameter', param);
  });

  it('refuses a bad scope at creation, and keys for unknown accounts', async () => {
    const id = await newAccount();
    await fails(admin('POST', `/accounts/${id}/keys`, { scope: { sdk: ['curl'] } }), 400, 'invalid_parameter', 'scope.sdk');
    await fails(admin('POST', `/accounts/${id}/keys`, { scope: { endpoints: ['completions'] } }), 400, 'invalid_parameter', 'scope.endpoints');
    await fails(admin('POST', `/accounts/${id}/keys`, { status: 'disabled' }), 400, 'invalid_parameter', 'status');
    await fails(admin('POST', '/accounts/nobody/keys', {}), 404, 'account_not_found');
    await fails(admin('GET', '/accounts/nobody/keys'), 404, 'account_not_found');
    expect((await ok(admin('GET', `/accounts/${id}/keys`))).data).toEqual([]);
    // An entry this gateway lacks, beside one it has, is harmless.
    expect((await admin('POST', `/accounts/${id}/keys`, { scope: { endpoints: ['chat/completions', 'moderations'] } })).status).toBe(201);
  });

  it('deletes a key: it stops working at once, and is then 404', async () => {
    const id = await newAccount();
    const { key, id: keyId } = await newKey(id);
    expect((await chat(key as string)).status).toBe(200);
    expect(await ok(admin('DELETE', `/keys/${keyId}`))).toEqual({ object: 'api_key', id: keyId, deleted: true, _requestId: expect.any(String) });
    const refused = await errorOf(await chat(key as string));
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('invalid_api_key');
    await fails(admin('GET', `/keys/${keyId}`), 404, 'api_key_not_found');
    await fails(admin('DELETE', `/keys/${keyId}`), 404, 'api_key_not_found');
    await fails(admin('PATCH', `/keys/${keyId}`, { status: 'active' }), 404, 'api_key_not_found');
  });

  it('says to give the id, not the key, when a full key is in the path', async () => {
    const error = await fails(admin('GET', `/keys/${encodeURIComponent(gw.keys.main!)}`), 404, 'api_key_not_found');
    expect(error.message).toContain('key id');
    expect(error.message).not.toContain(gw.keys.main!.slice(-40));
    // Nor where an account id or a route belongs; a usage filter takes a whole key by its id.
    const secret = gw.keys.main!.slice(-40);
    for (const answer of [admin('GET', `/accounts/${gw.keys.main}`), admin('GET', `/key/${gw.keys.main}`), admin('GET', `/key/${gw.keys.main}`, undefined, null)]) {
      const text = await (await answer).text();
      expect(text).toContain('"error"');
      expect(text).not.toContain(secret);
    }
    const usage = await ok(admin('GET', `/usage?key=${gw.keys.main}`));
    expect(usage.filters.key).toBe(gw.keys.main!.slice(6, 18));
    expect(JSON.stringify(usage)).not.toContain(secret);
  });

  it('manages keys from the configuration file like any other', async () => {
    const configKeyId = gw.keys.main!.slice(6, 18);
    expect(await ok(admin('GET', `/keys/${configKeyId}`))).toMatchObject({ account_id: 'acct', name: 'main', status: 'active' });
    await ok(admin('PATCH', `/keys/${configKeyId}`, { status: 'disabled' }));
    expect((await chat(gw.keys.main!)).status).toBe(401);
    await ok(admin('PATCH', `/keys/${configKeyId}`, { status: 'active' }));
    expect((await chat(gw.keys.main!)).status).toBe(200);
  });
});

describe('usage', () => {
  const DAY = 86_400_000;
  const day1 = Date.parse('2031-03-01T10:00:00Z');
  const day2 = day1 + DAY;
  let account: string;
  let other: string;

  function settlement(requestId: string, accountId: string, apiKeyId: string, model: string, startedAt: number, tokens: [number, number], costMicros: number): Settlement {
    return {
      requestId,
      charge: null,
      releaseReservation: false,
      usage: {
        requestId, accountId, apiKeyId, model, provider: 'mock', upstreamModel: 'm', modality: 'chat',
        promptTokens: tokens[0], completionTokens: tokens[1], costMicros, status: 200, latencyMs: 5, startedAt, endedAt: startedAt + 5,
      },
    };
  }

  beforeAll(async () => {
    account = await newAccount();
    other = await newAccount();
    await gw.gateway.store.commitSettlements([
      settlement('u1', account, 'keyA', 'mock-chat', day1, [10, 5], 1_500),
      settlement('u2', account, 'keyA', 'mock-chat', day1 + 1000, [20, 10], 2_500),
      settlement('u3', account, 'keyB', 'other-chat', day1 + 2000, [1, 1], 7),
      settlement('u4', account, 'keyA', 'mock-chat', day2, [100, 50], 1_000_000),
      settlement('u5', other, 'keyC', 'mock-chat', day2 + 5, [3, 4], 0),
    ]);
  });

  it('sums per day, account, key and model, with totals in credits and micros', async () => {
    const usage = await ok(admin('GET', `/usage?account=${account}`));
    expect(usage.object).toBe('usage');
    expect(usage.filters).toEqual({ account, key: null, model: null, from: null, to: null });
    expect(usage.data).toEqual([
      { day: '2031-03-01', account_id: account, api_key_id: 'keyA', model: 'mock-chat', requests: 2, prompt_tokens: 30, completion_tokens: 15, total_tokens: 45, cost: 0.004, cost_micros: 4_000 },
      { day: '2031-03-01', account_id: account, api_key_id: 'keyB', model: 'other-chat', requests: 1, prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, cost: 0.000007, cost_micros: 7 },
      { day: '2031-03-02', account_id: account, api_key_id: 'keyA', model: 'mock-chat', requests: 1, prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, cost: 1, cost_micros: 1_000_000 },
    ]);
    expect(usage.totals).toEqual({ requests: 4, prompt_tokens: 131, completion_tokens: 66, total_tokens: 197, cost: 1.004007, cost_micros: 1_004_007 });
  });

  it('filters by key, model and an inclusive range of days', async () => {
    expect((await ok(admin('GET', `/usage?account=${account}&key=keyB`))).totals.requests).toBe(1);
    expect((await ok(admin('GET', `/usage?account=${account}&model=other-chat`))).totals).toMatchObject({ requests: 1, cost_micros: 7 });
    const second = await ok(admin('GET', `/usage?account=${account}&from=2031-03-02&to=2031-03-02`));
    expect((second.data as Json[]).map((r): unknown => r.day)).toEqual(['2031-03-02']);
    const first = await ok(admin('GET', `/usage?account=${account}&to=2031-03-01`));
    expect(first.totals.requests).toBe(3);
    const both = await ok(admin('GET', '/usage?from=2031-03-01&to=2031-03-02'));
    expect(both.totals.requests).toBe(5);
    expect(new Set((both.data as Json[]).map((r): unknown => r.account_id))).toEqual(new Set([account, other]));
    expect((await ok(admin('GET', '/usage?from=2031-03-03'))).data).toEqual([]);
  });

  it.each([
    ['from=2031-02-30', 'from'],
    ['to=yesterday', 'to'],
    ['from=2031-03-02&to=2031-03-01', 'from'],
    ['acount=x', 'acount'],
    ['model=a&model=b', 'model'],
  ])('refuses ?%s naming %s', async (query, param) => {
    await fails(admin('GET', `/usage?${query}`), 400, 'invalid_parameter', param);
  });

  it('answers 404 for an unknown account', async () => {
    await fails(admin('GET', '/usage?account=nobody'), 404, 'account_not_found');
  });

  it('reports the requests served on /v1, their cost matching the charges in the ledger', async () => {
    const id = await newAccount(50);
    const { key, id: keyId } = await newKey(id);
    const requestIds: string[] = [];
    for (const model of ['priced-chat', 'priced-chat', 'mock-chat']) {
      const res = await chat(key as string, model);
      expect(res.status).toBe(200);
      await res.text();
      requestIds.push(res.headers.get('x-request-id')!);
    }
    // Usage is written off the hot path, in batches: wait for it.
    let usage: Json = {};
    for (let i = 0; i < 100; i++) {
      usage = await ok(admin('GET', `/usage?account=${id}&key=${keyId}`));
      if (usage.totals.requests === 3) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((usage.data as Json[]).map((r): unknown => [r.model, r.requests])).toEqual([['mock-chat', 1], ['priced-chat', 2]]);
    const priced = (usage.data as Json[])[1]!;
    expect(priced.cost_micros).toBe((priced.prompt_tokens + priced.completion_tokens) * 10_000);
    const account = await ok(admin('GET', `/accounts/${id}`));
    expect(account.balance_micros).toBe(50_000_000 - usage.totals.cost_micros);
    const charges = ((await ok(admin('GET', `/accounts/${id}/ledger`))).data as Json[]).filter((e) => e.kind === 'charge');
    expect(charges.map((e): unknown => e.request_id).sort()).toEqual(requestIds.slice(0, 2).sort());
    expect(charges.every((e) => e.api_key_id === keyId)).toBe(true);
  });
});
