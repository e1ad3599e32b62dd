/** The same gateway on PostgreSQL storage: only the storage URL changes. */
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import pg from 'pg';
import { MOCK_MODEL, errorOf, startGateway } from '../support/gateway-harness.js';
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
});
