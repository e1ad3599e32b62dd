/** The same gateway on PostgreSQL storage: only the storage URL changes. */
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import pg from 'pg';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MOCK_MODEL, errorOf, startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { until } from '../support/until.js';
import { freshSchemaUrl, postgresAvailable } from '../support/postgres.js';

const available = await postgresAvailable();

describe.runIf(available)('gateway on PostgreSQL', () => {
  it('bootstraps accounts and keys into PostgreSQL and serves with them', async () => {
    const gw = await startGateway({ config: { storage: { url: await freshSchemaUrl() } }, keys: { main: {}, off: { status: 'disabled' } } });
    try {
      const client = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.main!, maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] });
      expect(completion.choices[0]?.message.content).toContain('mock reply');
      const disabled = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.off!, maxRetries: 0 });
      const err = await disabled.models.list().catch((e: unknown) => e);
      expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('api_key_disabled');
    } finally {
      await gw.close();
    }
  });

  it('answers 503 store_unavailable, in bounded time, when the credit hold cannot get its row', async () => {
    const url = await freshSchemaUrl();
    const priced = { ...MOCK_MODEL, price: { input_per_million_tokens: 1, output_per_million_tokens: 1 } };
    const gw = await startGateway({ config: { storage: { url }, models: [priced] } });
    const parsed = new URL(url);
    const schema = parsed.searchParams.get('schema')!;
    parsed.searchParams.delete('schema');
    const locker = new pg.Client({ connectionString: parsed.toString(), options: `-c search_path=${schema}` });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query("select * from accounts where id = 'acct' for update");
      const started = Date.now();
      const res = await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const { status, body } = await errorOf(res);
      expect([status, body.error.code]).toEqual([503, 'store_unavailable']);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(Date.now() - started).toBeLessThan(9_000);
      await locker.query('rollback');
      expect((await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] }),
      })).status).toBe(200);
    } finally {
      await locker.end();
      await gw.close();
    }
  }, 20_000);

  it('answers text PostgreSQL cannot keep (NUL, over-long names) with 400 or 404 naming the field, never a 500, and keeps serving', async () => {
    const token = 'admin-token-for-the-nul-test-0123456789';
    const video = { id: 'mock-video', capabilities: ['video'], context_window: 4096, routes: [{ provider: 'mock', model: 'v' }] };
    const gw = await startGateway({ config: { storage: { url: await freshSchemaUrl() }, server: { admin_token: token }, models: [MOCK_MODEL, video] } });
    try {
      const admin = (method: string, path: string, body?: unknown) =>
        fetch(`${gw.url}/admin/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const v1 = (path: string, init: RequestInit = {}) => fetch(`${gw.baseURL}${path}`, { ...init, headers: { authorization: `Bearer ${gw.keys.main}`, ...init.headers } });
      const json = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const upload = (filename: string, type = 'audio/wav') => {
        const form = new FormData();
        form.set('purpose', 'user_data');
        form.set('file', new Blob(['RIFF'], { type }), filename);
        return v1('/files', { method: 'POST', body: form });
      };
      const cases: Array<[string, Promise<Response>, number, string | null]> = [
        ['account name', admin('POST', '/accounts', { id: 'nul-1', tier: 'standard', name: 'a\u0000b' }), 400, 'name'],
        ['top-up note', admin('POST', '/accounts/acct/topups', { credits: 1, note: 'x\u0000y' }), 400, 'note'],
        ['key name', admin('POST', '/accounts/acct/keys', { name: 'q\u0000' }), 400, 'name'],
        ['account path', admin('GET', '/accounts/a%00b'), 404, null],
        ['key path', admin('GET', '/keys/a%00b'), 404, null],
        ['key delete', admin('DELETE', '/keys/a%00b'), 404, null],
        ['usage filter', admin('GET', '/usage?model=a%00b'), 400, 'model'],
        ['ledger cursor', admin('GET', '/accounts/acct/ledger?after=le_%00'), 400, 'after'],
        ['files cursor', v1('/files?after=file-%00'), 400, 'after'],
        ['videos cursor', v1('/videos?after=%00'), 400, 'after'],
        ['file name', upload('a\u0000b.wav'), 400, 'file'],
        ['long file name', upload(`${'a'.repeat(600)}.wav`), 400, 'file'],
        ['long content type', upload('a.wav', `application/x-${'a'.repeat(200)}`), 400, 'file'],
        ['video prompt', v1('/videos', json({ model: 'mock-video', prompt: 'a\u0000b' })), 400, 'prompt'],
        ['model name', v1('/chat/completions', json({ model: 'a\u0000b', messages: [{ role: 'user', content: 'hi' }] })), 404, 'model'],
      ];
      for (const [what, answer, status, param] of cases) {
        const { status: got, body } = await errorOf(await answer);
        expect([what, got, body.error.param]).toEqual([what, status, param]);
      }
      // Nothing above left a write that cannot be committed in front of the next ones.
      const client = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.main!, maxRetries: 0 });
      expect((await client.chat.completions.create({ model: 'mock-chat', messages: [{ role: 'user', content: 'after' }] })).choices[0]?.message.content).toContain('after');
      expect((await upload('fine.wav')).status).toBe(200);
    } finally {
      await gw.close();
    }
  }, 20_000);

  it('keeps the charges it could not commit before shutdown (the store hung), and commits them at the next start', async () => {
    const url = await freshSchemaUrl();
    const spill = mkdtempSync(join(tmpdir(), 'tollgate-test-spill-'));
    const priced = { ...MOCK_MODEL, price: { input_per_million_tokens: 1000, output_per_million_tokens: 1000 } };
    const config = { storage: { url, spill_directory: spill }, models: [priced] };
    const first = await startGateway({ config });
    const parsed = new URL(url);
    const schema = parsed.searchParams.get('schema')!;
    parsed.searchParams.delete('schema');
    const locker = new pg.Client({ connectionString: parsed.toString(), options: `-c search_path=${schema}` });
    await locker.connect();
    const ask = (gw: RunningGateway) =>
      fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
    try {
      expect((await ask(first)).status).toBe(200);
      // Every settlement's commit now waits on the lock: the store has stopped answering it.
      await locker.query('begin');
      await locker.query('lock table usage_records in exclusive mode');
      const answered = await ask(first);
      expect(answered.status).toBe(200);
      const requestId = answered.headers.get('x-request-id')!;
      const started = Date.now();
      const closed = first.close();
      await until(() => Promise.resolve(readdirSync(spill)), (names) => names.some((name) => name.startsWith('tollgate-unsettled-')));
      // The hung commit dies with its connection, as it would with the database gone.
      await locker.query(`select pg_terminate_backend(pid) from pg_stat_activity where wait_event_type = 'Lock' and pid <> pg_backend_pid()`);
      await locker.query('rollback');
      await closed;
      expect(Date.now() - started).toBeLessThan(12_000);
      // A charge rides on its request's usage record.
      const charged = async () => Number((await locker.query('select count(*) as n from usage_records where request_id = $1 and charge_micros < 0', [requestId])).rows[0].n);
      expect(await charged()).toBe(0);

      const second = await startGateway({ config, presetKeys: { main: first.keys.main! } });
      try {
        expect(await charged()).toBe(1);
        expect(readdirSync(spill)).toEqual([]);
        // The balance moved by both requests' charges, once each.
        const charges = Number((await locker.query("select sum(charge_micros) as s from usage_records where account_id = 'acct'")).rows[0].s);
        expect(charges).toBeLessThan(0);
        expect((await second.gateway.store.getAccount('acct'))!.balanceMicros).toBe(100_000_000 + charges);
      } finally {
        await second.close();
      }
    } finally {
      await locker.end();
      await first.close().catch(() => undefined);
      rmSync(spill, { recursive: true, force: true });
    }
  }, 40_000);
});
