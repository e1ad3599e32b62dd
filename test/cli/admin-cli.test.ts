/**
 * The operator commands on the real `tollgate` binary, against a gateway listening in this
 * process: accounts, credits, keys and usage through the admin API, their tables and --json,
 * and exit status 1 for refusals and 2 for command-line mistakes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type Finished } from '../support/spawn-cli.js';
import { startGateway, MOCK_MODEL, type RunningGateway } from '../support/gateway-harness.js';

const TOKEN = 'cli-admin-token-0123456789abcdef';
let gw: RunningGateway;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  gw = await startGateway({
    config: {
      server: { admin_token: TOKEN },
      models: [MOCK_MODEL, { ...MOCK_MODEL, id: 'other-chat', price: { input_per_million_tokens: 1000, output_per_million_tokens: 1000 } }],
      tiers: { standard: { models: ['*'] }, restricted: { models: ['other-*'] } },
    },
  });
  env = { TOLLGATE_URL: gw.url, TOLLGATE_ADMIN_TOKEN: TOKEN };
});
afterAll(() => gw.close());

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answers are JSON, checked by value.
type Json = Record<string, any>;

const cli = (...args: string[]): Promise<Finished> => runCli(args, { env });

async function succeeds(...args: string[]): Promise<string> {
  const result = await cli(...args);
  expect(result.code, `tollgate ${args.join(' ')}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

async function json<T = Json>(...args: string[]): Promise<T> {
  return JSON.parse(await succeeds(...args, '--json')) as T;
}

const chat = (key: string, model = 'mock-chat') =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
  });

async function expectLedgerMatchesBalance(account: string): Promise<void> {
  const record = await gw.gateway.store.getAccount(account);
  expect(await gw.gateway.store.ledgerSum(account)).toBe(record!.balanceMicros);
}

describe('tollgate accounts', () => {
  it('creates, lists, shows, re-tiers, renames, tops up, adjusts and shows the ledger', async () => {
    const created = await succeeds('accounts', 'create', 'team/search', '--tier', 'standard', '--name', 'Search team', '--credits', '250.5');
    expect(created).toContain('Created account team/search.');
    expect(created).toMatch(/balance\s+250\.5 credits/);

    const list = await succeeds('accounts', 'list');
    const [header, ...rows] = list.trim().split('\n');
    expect(header).toMatch(/^ID\s+NAME\s+TIER\s+BALANCE\s+CREATED$/);
    expect(rows.find((r) => r.startsWith('team/search'))).toMatch(/^team\/search\s+Search team\s+standard\s+250\.5\s+\d{4}-/);
    expect(rows.find((r) => r.startsWith('acct '))).toMatch(/\s100\s/);

    expect(await succeeds('accounts', 'set-tier', 'team/search', 'restricted')).toMatch(/tier\s+restricted/);
    expect(await succeeds('accounts', 'set-name', 'team/search', 'Search')).toMatch(/name\s+Search\n/);

    const topup = await succeeds('accounts', 'topup', 'team/search', '10', '--note', 'invoice 7');
    expect(topup).toContain('Topped up team/search by 10 credits; balance now 260.5 credits.');
    const adjust = await succeeds('accounts', 'adjust', 'team/search', '-0.25', '--note', 'correction');
    expect(adjust).toContain('Adjusted team/search by -0.25 credits; balance now 260.25 credits.');
    expect(await succeeds('accounts', 'adjust', 'team/search', '--note=back', '-.75')).toContain('balance now 259.5 credits');

    const ledger = await succeeds('accounts', 'ledger', 'team/search', '--limit', '3');
    const lines = ledger.trim().split('\n');
    expect(lines[0]).toBe('Account team/search: balance 259.5 credits.');
    expect(lines[1]).toMatch(/^TIME\s+KIND\s+AMOUNT\s+REQUEST\s+KEY\s+NOTE$/);
    expect(lines[2]).toMatch(/adjustment\s+-0\.75\s+req_[0-9a-f]{32}\s+-\s+back$/);
    expect(lines[3]).toMatch(/adjustment\s+-0\.25\s+req_\S+\s+-\s+correction$/);
    expect(lines[4]).toMatch(/topup\s+10\s+req_\S+\s+-\s+invoice 7$/);
    const next = /^\(older entries follow: add --after (le_[0-9a-f]{32}) for the next page\)$/.exec(lines[5]!);
    expect(next, lines[5]).not.toBeNull();
    const rest = (await succeeds('accounts', 'ledger', 'team/search', '--limit', '3', '--after', next![1]!)).trim().split('\n');
    expect(rest[0]).toBe('Account team/search: balance 259.5 credits.');
    expect(rest[2]).toMatch(/topup\s+250\.5\s+req_\S+\s+-\s+opening credit$/);
    expect(rest).toHaveLength(3);

    const shown = await json('accounts', 'show', 'team/search');
    expect(shown).toMatchObject({ object: 'account', id: 'team/search', name: 'Search', tier: 'restricted', balance: 259.5, balance_micros: 259_500_000 });
    await expectLedgerMatchesBalance('team/search');
  });

  it('prints the API JSON with --json', async () => {
    const created = await json('accounts', 'create', 'json-acct', '--tier', 'standard');
    expect(created).toMatchObject({ object: 'account', id: 'json-acct', balance_micros: 0 });
    const list = await json<{ object: string; data: Array<{ id: string }> }>('accounts', 'list');
    expect(list.object).toBe('list');
    expect(list.data.map((a) => a.id)).toContain('json-acct');
    const change = await json('accounts', 'topup', 'json-acct', '0.000001');
    expect(change).toMatchObject({ object: 'balance_change', entry: { kind: 'topup', amount_micros: 1 }, account: { balance_micros: 1 } });
    const ledger = await json('accounts', 'ledger', 'json-acct');
    expect(ledger).toMatchObject({ object: 'list', balance_micros: 1, has_more: false });
    await expectLedgerMatchesBalance('json-acct');
  });

  it('prints the gateway refusal and exits 1', async () => {
    const missing = await cli('accounts', 'show', 'nobody');
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe('tollgate: No account has the id "nobody". (account_not_found)');
    expect(missing.stdout).toBe('');
    const tier = await cli('accounts', 'create', 'gold-acct', '--tier', 'gold');
    expect(tier.code).toBe(1);
    expect(tier.stderr).toContain('tier "gold" is not a configured tier (configured: standard, restricted)');
    const twice = await cli('accounts', 'create', 'acct', '--tier', 'standard');
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('(account_already_exists)');
    const zero = await cli('accounts', 'topup', 'acct', '0');
    expect(zero.code).toBe(1);
    expect(zero.stderr).toContain('credits must be greater than 0');
  });

  it('exits 2 on command-line mistakes, before calling the gateway', async () => {
    for (const args of [
      ['accounts'],
      ['accounts', 'explode'],
      ['accounts', 'show'],
      ['accounts', 'show', 'a', 'b'],
      ['accounts', 'create', 'x'],
      ['accounts', 'topup', 'acct', 'ten'],
      ['accounts', 'topup', 'acct', '1.0000000000000001'],
      ['accounts', 'create', 'fine-acct', '--tier', 'standard', '--credits', '0.1234567'],
      ['accounts', 'ledger', 'acct', '--limit', 'abc'],
      ['accounts', 'ledger', 'acct', '--limit', '0'],
      ['accounts', 'ledger', 'acct', '--after', 'le_123'],
      ['accounts', 'list', '--colour'],
      ['keys', 'set-scope', 'AAAAAAAAAAAA'],
      ['keys', 'show', 'not-a-key-id'],
      ['usage', 'extra'],
    ]) {
      const result = await cli(...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain('Run "tollgate help" for usage.');
    }
  });

  it('needs the admin token, takes --url and --token over the environment, and says when the gateway is unreachable', async () => {
    const noToken = await runCli(['accounts', 'list'], { env: { TOLLGATE_URL: gw.url, TOLLGATE_ADMIN_TOKEN: '' } });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('no admin token: set TOLLGATE_ADMIN_TOKEN (or pass --token)');
    const wrong = await runCli(['accounts', 'list'], { env: { TOLLGATE_URL: gw.url, TOLLGATE_ADMIN_TOKEN: 'wrong-token-wrong-token' } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr.trim()).toBe('tollgate: The admin token is wrong. (invalid_admin_token)');
    const flags = await runCli(['accounts', 'list', '--url', gw.url, '--token', TOKEN], { env: { TOLLGATE_URL: 'http://127.0.0.1:9', TOLLGATE_ADMIN_TOKEN: 'wrong-token-wrong-token' } });
    expect(flags.code).toBe(0);
    const unreachable = await runCli(['accounts', 'list', '--url', 'http://127.0.0.1:9'], { env });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot reach the gateway at http://127.0.0.1:9');
    const badUrl = await runCli(['accounts', 'list', '--url', 'localhost:8080'], { env });
    expect(badUrl.code).toBe(2);
    for (const url of ['http://admin:hunter2-secret@127.0.0.1:9', 'admin:hunter2-secret@localhost:8080', 'ftp://u:hunter2-secret@h']) {
      const withPassword = await runCli(['accounts', 'list', '--url', url], { env });
      expect(withPassword.code).toBe(2);
      expect(withPassword.stderr).not.toContain('hunter2-secret');
    }
  });
});

describe('tollgate keys', () => {
  it('creates a key shown once on stdout, which works at once; disables, enables, scopes and deletes it', async () => {
    await succeeds('accounts', 'create', 'keyed', '--tier', 'standard', '--credits', '5');
    const created = await cli('keys', 'create', 'keyed', '--name', 'backend');
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^sk-tg-[A-Za-z0-9]{12}-[A-Za-z0-9]{40}$/);
    expect(created.stderr).toContain('shown only now');
    const id = key.slice(6, 18);
    expect((await chat(key)).status).toBe(200);

    const list = await succeeds('keys', 'list', 'keyed');
    expect(list).toMatch(new RegExp(`^${id}\\s+backend\\s+active\\s+-\\s+\\d{4}-`, 'm'));
    expect(list).not.toContain(key);

    // A whole key is accepted as the argument, and only its id is shown.
    const shown = await succeeds('keys', 'show', key);
    expect(shown).toMatch(/status\s+active/);
    expect(shown).toContain(`sk-tg-${id}-…`);
    expect(shown).not.toContain(key);

    expect(await succeeds('keys', 'disable', id)).toBe(`Key sk-tg-${id}-… is now disabled.\n`);
    const refused = await chat(key);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('api_key_disabled');
    expect(await succeeds('keys', 'enable', id)).toContain('is now active');
    expect((await chat(key)).status).toBe(200);

    expect(await succeeds('keys', 'set-scope', id, '--models', 'other-*,x-*', '--endpoints', 'chat/completions')).toMatch(/scope\s+models=other-\*,x-\* endpoints=chat\/completions/);
    expect((await chat(key)).status).toBe(403);
    const scoped = await json('keys', 'set-scope', id, '--scope', '{"sdks":["curl"]}');
    expect(scoped.scope).toEqual({ sdks: ['curl'] });
    expect((await json('keys', 'set-scope', id, '--none')).scope).toBeNull();
    expect((await chat(key)).status).toBe(200);

    expect(await succeeds('keys', 'delete', id)).toBe(`Deleted key ${id}.\n`);
    expect((await chat(key)).status).toBe(401);
    const again = await cli('keys', 'delete', id);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('(api_key_not_found)');
    await expectLedgerMatchesBalance('keyed');
  });

  it('creates a scoped key with --json, the key in the JSON', async () => {
    const created = await json('keys', 'create', 'acct', '--models', 'mock-*');
    expect(created).toMatchObject({ object: 'api_key', account_id: 'acct', scope: { models: ['mock-*'] }, status: 'active' });
    expect(created.key).toMatch(/^sk-tg-/);
    const bad = await cli('keys', 'create', 'acct', '--scope', '{"colour":["red"]}');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("Unknown field 'scope.colour'");
  });

  it('still generates keys without a gateway', async () => {
    const result = await runCli(['keys', 'generate'], { env: { TOLLGATE_ADMIN_TOKEN: '' } });
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^sk-tg-[A-Za-z0-9]{12}-[A-Za-z0-9]{40}$/);
  });
});

describe('tollgate usage', () => {
  it('shows requests, tokens and cost per day, account, key and model, with a total row', async () => {
    await succeeds('accounts', 'create', 'metered', '--tier', 'standard', '--credits', '100');
    const key = (await cli('keys', 'create', 'metered')).stdout.trim();
    for (const model of ['mock-chat', 'other-chat', 'other-chat']) expect((await chat(key, model)).status).toBe(200);
    let report: Json = {};
    for (let i = 0; i < 100 && report.totals?.requests !== 3; i++) {
      report = await json('usage', '--account', 'metered');
      if (report.totals.requests !== 3) await new Promise((r) => setTimeout(r, 20));
    }
    expect(report.totals.requests).toBe(3);
    const table = await succeeds('usage', '--account', 'metered', '--key', key);
    const lines = table.trim().split('\n');
    expect(lines[0]).toMatch(/^DAY\s+ACCOUNT\s+KEY\s+MODEL\s+REQUESTS\s+PROMPT\s+COMPLETION\s+COST$/);
    expect(lines[1]).toMatch(new RegExp(`^\\d{4}-\\d{2}-\\d{2}\\s+metered\\s+${key.slice(6, 18)}\\s+mock-chat\\s+1\\s`));
    expect(lines[2]).toMatch(/other-chat\s+2\s/);
    expect(lines[3]).toMatch(/^total\s+3\s/);
    expect(lines[3]!.trim().split(/\s+/).at(-1)).toBe(String(report.totals.cost));
    const account = await json('accounts', 'show', 'metered');
    expect(account.balance_micros).toBe(100_000_000 - report.totals.cost_micros);
    await expectLedgerMatchesBalance('metered');

    expect((await succeeds('usage', '--account', 'metered', '--from', '2001-01-01', '--to', '2001-01-02')).trim()).toBe('No usage recorded for these filters.');
    const bad = await cli('usage', '--from', '2001-13-01');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('from must be a UTC day written YYYY-MM-DD');
  });
});

describe('tollgate help', () => {
  it('lists the operator commands', async () => {
    const help = await succeeds('help');
    for (const text of ['accounts create ID --tier T', 'accounts topup ID CREDITS', 'keys create ACCOUNT', 'keys set-scope KEY', 'keys generate', 'usage [--account A]', 'TOLLGATE_ADMIN_TOKEN', 'TOLLGATE_URL']) {
      expect(help).toContain(text);
    }
  });
});
