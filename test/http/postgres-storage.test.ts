/** The same gateway on PostgreSQL storage: only the storage URL changes. */
import { afterAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGateway } from '../support/gateway-harness.js';
import { dropTestSchemas, freshSchemaUrl, postgresAvailable } from '../support/postgres.js';

const available = await postgresAvailable();

describe.runIf(available)('gateway on PostgreSQL', () => {
  afterAll(() => dropTestSchemas());

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
});
