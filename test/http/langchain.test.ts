/**
 * LangChain (@langchain/openai) as the client, black box against a listening gateway: chat,
 * streaming with usage, tools, embeddings, and what it does with the gateway's errors (it retries
 * by itself, never a 400-class answer; it raises an error frame inside a started stream). Its own
 * User-Agent names it, so a key scoped to the `langchain` SDK takes it and no other client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { HumanMessage, SystemMessage, ToolMessage, type AIMessageChunk } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import OpenAI from 'openai';
import { z } from 'zod';
import { MOCK_MODEL, startGateway, type RunningGateway } from '../support/gateway-harness.js';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({
    keys: { main: {}, langchainOnly: { scope: { sdks: ['langchain'] } } },
    config: {
      providers: [{ id: 'mock', kind: 'mock' }, { id: 'breaks', kind: 'mock', mock: { error_after_chunks: 2 } }],
      models: [
        MOCK_MODEL,
        { id: 'breaks-chat', capabilities: ['chat', 'streaming'], context_window: 4096, routes: [{ provider: 'breaks', model: 'm' }] },
        { id: 'mock-embed', capabilities: ['embeddings'], context_window: 8192, routes: [{ provider: 'mock', model: 'mock-embedder' }] },
      ],
    },
  });
});
afterAll(async () => {
  await gw.close();
});

function chat(model = 'mock-chat', key = gw.keys.main, extra: Partial<ConstructorParameters<typeof ChatOpenAI>[0]> = {}): ChatOpenAI {
  return new ChatOpenAI({ model, apiKey: key, configuration: { baseURL: gw.baseURL }, maxRetries: 0, ...extra });
}

describe('LangChain ChatOpenAI', () => {
  it('gets a completion with its usage', async () => {
    const answer = await chat().invoke([new SystemMessage('Be brief.'), new HumanMessage('Hello from LangChain')]);
    expect(answer.content).toBe('This is a mock reply to: Hello from LangChain');
    // The mock counts a token a word.
    expect(answer.usage_metadata?.output_tokens).toBe(9);
    expect(answer.usage_metadata?.total_tokens).toBe((answer.usage_metadata?.input_tokens ?? 0) + 9);
    expect(answer.response_metadata.finish_reason).toBe('stop');
  });

  it('streams the completion, the usage in the last chunk', async () => {
    let whole: AIMessageChunk | undefined;
    let chunks = 0;
    for await (const chunk of await chat().stream('Stream this please')) {
      chunks++;
      whole = whole === undefined ? chunk : whole.concat(chunk);
    }
    expect(chunks).toBeGreaterThan(3);
    expect(whole?.content).toBe('This is a mock reply to: Stream this please');
    expect(whole?.usage_metadata?.output_tokens).toBe(9);
  });

  it('calls a bound tool and takes its result back', async () => {
    const lookup = tool(() => 'Sunny', { name: 'get_weather', description: 'The weather in a city.', schema: z.object({ city: z.string().optional() }) });
    const model = chat().bindTools([lookup], { tool_choice: 'required' });
    const asked = new HumanMessage('What is the weather?');
    const calling = await model.invoke([asked]);
    expect(calling.tool_calls?.map((call) => [call.name, call.args])).toEqual([['get_weather', {}]]);
    const call = calling.tool_calls?.[0];
    const answer = await chat().invoke([asked, calling, new ToolMessage({ content: 'Sunny', tool_call_id: call?.id ?? '' })]);
    expect(typeof answer.content).toBe('string');
    expect(answer.tool_calls ?? []).toEqual([]);
  });

  it('raises an error frame that arrives inside a started stream, with its message', async () => {
    const seen: string[] = [];
    const reading = (async () => {
      for await (const chunk of await chat('breaks-chat').stream('Break after two chunks')) seen.push(typeof chunk.content === 'string' ? chunk.content : JSON.stringify(chunk.content));
    })();
    await expect(reading).rejects.toMatchObject({ message: expect.stringMatching(/^.+$/) as unknown, code: 'upstream_error' });
    expect(seen.join('')).not.toBe('');
  });

  it('is told 401 for a bad key, 402 without credit and 404 for an unknown model, and retries none of them', async () => {
    const attempts = async (run: () => Promise<unknown>): Promise<{ status?: number; code?: string }> => {
      try {
        await run();
      } catch (err) {
        return err as { status?: number; code?: string };
      }
      throw new Error('expected a refusal');
    };
    // LangChain's own retries on (it turns the SDK's off): a 400-class answer must still come back at once.
    const retrying = { maxRetries: 3 };
    // A gateway whose accounts start without credit, for a priced model.
    const penniless = await startGateway({ credits: 0, config: { models: [{ ...MOCK_MODEL, price: { input_per_million_tokens: 1, output_per_million_tokens: 1 } }] } });
    const started = Date.now();
    const bad = await attempts(() => chat('mock-chat', 'sk-tg-notakey-000000000000000000000000', retrying).invoke('hi'));
    const broke = await attempts(() => new ChatOpenAI({ model: 'mock-chat', apiKey: penniless.keys.main, configuration: { baseURL: penniless.baseURL }, ...retrying }).invoke('hi')).finally(() => penniless.close());
    const unknown = await attempts(() => chat('no-such-model', gw.keys.main, retrying).invoke('hi'));
    expect([bad.status, bad.code]).toEqual([401, 'invalid_api_key']);
    expect([broke.status, broke.code]).toEqual([402, 'insufficient_quota']);
    expect([unknown.status, unknown.code]).toEqual([404, 'model_not_found']);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('is recognised by its own User-Agent: a key scoped to LangChain takes it and refuses the openai SDK', async () => {
    const answer = await chat('mock-chat', gw.keys.langchainOnly).invoke('Only LangChain');
    expect(answer.content).toBe('This is a mock reply to: Only LangChain');
    const sdk = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.langchainOnly!, maxRetries: 0 });
    await expect(sdk.chat.completions.create({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 403 });
  });
});

describe('LangChain OpenAIEmbeddings', () => {
  it('embeds a query and documents, in order', async () => {
    const embeddings = new OpenAIEmbeddings({ model: 'mock-embed', apiKey: gw.keys.main, configuration: { baseURL: gw.baseURL }, maxRetries: 0 });
    const query = await embeddings.embedQuery('The food was delicious');
    const docs = await embeddings.embedDocuments(['The food was delicious', 'The service was slow']);
    expect(query).toHaveLength(64);
    expect(docs).toHaveLength(2);
    expect(docs[0]?.map((v) => Math.fround(v))).toEqual(query.map((v) => Math.fround(v)));
    expect(docs[1]).not.toEqual(docs[0]);
  });
});
