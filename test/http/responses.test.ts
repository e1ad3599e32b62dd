/**
 * POST /v1/responses (OpenAI's Responses API) through the clients that use it by default: the
 * openai SDK's `responses` and the Vercel AI SDK's OpenAI provider. The answer comes from the
 * chat pipeline, so limits, credits and idempotency are the chat endpoint's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, streamText, tool } from 'ai';
import { errorOf, startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { FAKE_DEFAULT_REPLY, FAKE_OPENAI_KEY, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.js';

let gw: RunningGateway;
let client: OpenAI;
let upstream: FakeOpenAI;

beforeAll(async () => {
  upstream = await startFakeOpenAI();
  gw = await startGateway({
    accounts: { acct: 'standard', other: 'standard' },
    keys: { main: {}, other: { account: 'other' } },
    config: {
      providers: [{ id: 'mock', kind: 'mock' }, { id: 'breaks', kind: 'mock', mock: { error_after_chunks: 2 } }, { id: 'oai', kind: 'openai', base_url: upstream.url, api_key: FAKE_OPENAI_KEY }],
      models: [
        { id: 'gpt-test', capabilities: ['chat', 'streaming', 'tools'], context_window: 8192, routes: [{ provider: 'oai', model: 'gpt-4o-mini' }] },
        { id: 'mock-chat', capabilities: ['chat', 'streaming', 'tools', 'json_mode'], context_window: 4096, max_output_tokens: 100, routes: [{ provider: 'mock', model: 'm' }] },
        { id: 'breaks', capabilities: ['chat', 'streaming'], context_window: 4096, routes: [{ provider: 'breaks', model: 'm' }] },
      ],
    },
  });
  client = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.main!, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
});

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.baseURL}/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('responses with the openai SDK', () => {
  it('answers a response with its text, usage and the request id in its id', async () => {
    const response = await client.responses.create({ model: 'mock-chat', instructions: 'Be brief.', input: 'Hello gateway' });
    expect(response.object).toBe('response');
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('This is a mock reply to: Hello gateway');
    expect(response.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(response.usage?.output_tokens).toBe(8);
    expect(response.usage?.total_tokens).toBe((response.usage?.input_tokens ?? 0) + 8);
    expect(response.instructions).toBe('Be brief.');
  });

  it('streams the Responses events, ending with the completed response', async () => {
    const stream = await client.responses.create({ model: 'mock-chat', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hi there' }] }], stream: true });
    const types: string[] = [];
    let text = '';
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') final = event.response;
    }
    expect(text).toBe('This is a mock reply to: Hi there');
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(final?.output_text ?? final?.output.map((o) => (o.type === 'message' ? o.content.map((c) => (c.type === 'output_text' ? c.text : '')).join('') : '')).join('')).toBe(text);
    expect(final?.usage?.output_tokens).toBe(8);
  });

  it('calls a function tool, and takes its output back in the next request', async () => {
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', description: 'The weather', parameters: { type: 'object', properties: {} }, strict: false }];
    const first = await client.responses.create({ model: 'mock-chat', input: 'What is the weather?', tools, tool_choice: { type: 'function', name: 'get_weather' } });
    const call = first.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    if (call?.type !== 'function_call') throw new Error('no call');
    const second = await client.responses.create({
      model: 'mock-chat',
      tools,
      input: [{ role: 'user', content: 'What is the weather?' }, call, { type: 'function_call_output', call_id: call.call_id, output: 'Sunny' }, { role: 'user', content: 'Thanks' }],
    });
    expect(second.output_text).toBe('This is a mock reply to: Thanks');
  });

  it('keeps a response, so that a later request may name its items; not with store: false, nor for another account', async () => {
    const first = await client.responses.create({ model: 'mock-chat', input: 'Remember this' });
    expect((first as unknown as { store: boolean }).store).toBe(true);
    const said = first.output[0]!.id!;
    const next = await client.responses.create({ model: 'mock-chat', input: [{ role: 'user', content: 'Remember this' }, { type: 'item_reference', id: said }, { role: 'user', content: 'And now' }] });
    expect(next.output_text).toBe('This is a mock reply to: And now');

    const unkept = await client.responses.create({ model: 'mock-chat', input: 'Forget this', store: false });
    expect((unkept as unknown as { store: boolean }).store).toBe(false);
    for (const [id, apiKey] of [[unkept.output[0]!.id!, gw.keys.main!], [said, gw.keys.other!]] as const) {
      const res = await fetch(`${gw.baseURL}/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-chat', input: [{ type: 'item_reference', id }] }),
      });
      const { status, body } = await errorOf(res);
      expect([status, body.error.param]).toEqual([400, 'input[0].id']);
    }
  });

  it('ends a stream whose upstream reported no usage with the usage it is charged for, never null', async () => {
    upstream.behave({ kind: 'ok', noUsage: true });
    try {
      const stream = await client.responses.create({ model: 'gpt-test', input: 'Hi there', stream: true });
      let final: OpenAI.Responses.Response | undefined;
      for await (const event of stream) if (event.type === 'response.completed') final = event.response;
      expect(final?.usage?.output_tokens).toBeGreaterThan(0);
      expect(final?.usage?.total_tokens).toBe((final?.usage?.input_tokens ?? 0) + (final?.usage?.output_tokens ?? 0));
      // The kept response shows the same.
      expect((await client.responses.retrieve(final!.id)).usage).toEqual(final?.usage);
    } finally {
      upstream.behave({ kind: 'ok' });
    }
  });

  it('reports a stream that fails after it started as an error event the SDK raises', async () => {
    const stream = await client.responses.create({ model: 'breaks', input: 'Hello there friend', stream: true });
    let seen = 0;
    await expect(
      (async () => {
        for await (const event of stream) if (event.type === 'response.output_text.delta') seen++;
      })(),
    ).rejects.toBeInstanceOf(OpenAI.APIError);
    expect(seen).toBeGreaterThan(0);
  });

  it('replays a response by its Idempotency-Key, byte for byte, a stream included', async () => {
    for (const stream of [false, true]) {
      const body = { model: 'mock-chat', input: `Once ${String(stream)}`, stream };
      const headers = { 'idempotency-key': `resp-${String(stream)}-${Date.now()}` };
      const first = await post(body, headers);
      const firstText = await first.text();
      const again = await post(body, headers);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.text()).toBe(firstText);
    }
  });
});

describe('kept responses: previous_response_id, retrieve and delete', () => {
  /** The messages the upstream was last sent. */
  const lastSent = () => upstream.requests[upstream.requests.length - 1]?.body.messages as unknown[];

  it('continues a conversation by previous_response_id: the upstream gets every earlier turn, without the earlier instructions', async () => {
    const first = await client.responses.create({ model: 'gpt-test', instructions: 'Be brief.', input: 'Capital of France?' });
    const second = await client.responses.create({ model: 'gpt-test', previous_response_id: first.id, input: [{ role: 'user', content: [{ type: 'input_text', text: 'Its population?' }] }] });
    expect(second.previous_response_id).toBe(first.id);
    expect(lastSent()).toEqual([
      { role: 'user', content: 'Capital of France?' },
      { role: 'assistant', content: FAKE_DEFAULT_REPLY },
      { role: 'user', content: [{ type: 'text', text: 'Its population?' }] },
    ]);

    // Streamed, with instructions of its own, and a store: false turn may still continue a kept one.
    const stream = await client.responses.create({ model: 'gpt-test', previous_response_id: second.id, instructions: 'Answer in French.', input: 'And its river?', stream: true, store: false });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') completed = event.response;
    expect(completed?.previous_response_id).toBe(second.id);
    expect(lastSent()).toEqual([
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'Capital of France?' },
      { role: 'assistant', content: FAKE_DEFAULT_REPLY },
      { role: 'user', content: [{ type: 'text', text: 'Its population?' }] },
      { role: 'assistant', content: FAKE_DEFAULT_REPLY },
      { role: 'user', content: 'And its river?' },
    ]);
    const { status, body } = await errorOf(await post({ model: 'gpt-test', previous_response_id: completed?.id, input: 'More' }));
    expect([status, body.error.code, body.error.param]).toEqual([400, 'previous_response_not_found', 'previous_response_id']);
  });

  it('continues a conversation through a function call and its output', async () => {
    upstream.behave({ kind: 'tool_call' });
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false }];
    let first: OpenAI.Responses.Response;
    try {
      first = await client.responses.create({ model: 'gpt-test', input: 'Weather in Paris?', tools });
    } finally {
      upstream.behave({ kind: 'ok' });
    }
    const call = first.output.find((o) => o.type === 'function_call');
    if (call?.type !== 'function_call') throw new Error('no call');
    const next = await client.responses.create({ model: 'gpt-test', previous_response_id: first.id, tools, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Sunny' }] });
    expect(next.output_text).toBe(FAKE_DEFAULT_REPLY);
    expect(lastSent()).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: call.call_id, type: 'function', function: { name: call.name, arguments: call.arguments } }] },
      { role: 'tool', tool_call_id: call.call_id, content: 'Sunny' },
    ]);
  });

  it('gives a kept response back as it was answered, streamed or not, and forgets it when deleted', async () => {
    const answered = await client.responses.create({ model: 'mock-chat', input: 'Keep me', metadata: { topic: 'tests' } });
    expect(await client.responses.retrieve(answered.id)).toEqual(answered);

    const stream = await client.responses.create({ model: 'mock-chat', input: 'Keep me streamed', stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') completed = event.response;
    expect(await client.responses.retrieve(completed!.id)).toEqual({ ...completed, output_text: 'This is a mock reply to: Keep me streamed' });

    // As openai-python sends it: labelled JSON, with no body.
    const deleted = await fetch(`${gw.baseURL}/responses/${answered.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json', 'content-length': '0' } });
    expect(deleted.status).toBe(200);
    expect(deleted.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await deleted.json()).toEqual({ id: answered.id, object: 'response', deleted: true });
    await expect(client.responses.retrieve(answered.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.responses.delete(answered.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const { status, body } = await errorOf(await post({ model: 'mock-chat', previous_response_id: answered.id, input: 'Again' }));
    expect([status, body.error.code]).toEqual([400, 'previous_response_not_found']);
  });

  it('lists the items a response was generated from, the conversation before it included, page by page', async () => {
    const first = await client.responses.create({ model: 'mock-chat', input: 'First question' });
    const second = await client.responses.create({
      model: 'mock-chat',
      previous_response_id: first.id,
      input: [
        { role: 'developer', content: 'Be brief.' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Second question' }] },
      ],
    });
    const items: OpenAI.Responses.ResponseItem[] = [];
    for await (const item of client.responses.inputItems.list(second.id, { order: 'asc', limit: 2 })) items.push(item);
    expect(items.map((item) => (item.type === 'message' ? [item.role, item.status, item.content] : [item.type]))).toEqual([
      ['user', 'completed', [{ type: 'input_text', text: 'First question' }]],
      ['assistant', 'completed', [{ type: 'output_text', text: 'This is a mock reply to: First question', annotations: [] }]],
      ['developer', 'completed', [{ type: 'input_text', text: 'Be brief.' }]],
      ['user', 'completed', [{ type: 'input_text', text: 'Second question' }]],
    ]);
    expect(items[1]?.id).toBe(first.output[0]?.id);
    expect(new Set(items.map((item) => item.id)).size).toBe(4);
    // Newest first by default, and the same ids at every read.
    const page = await client.responses.inputItems.list(second.id);
    expect(page.data.map((item) => item.id)).toEqual(items.map((item) => item.id).reverse());
    expect([page.has_more, (await client.responses.inputItems.list(first.id)).data.length]).toEqual([false, 1]);

    const bad = await errorOf(await fetch(`${gw.baseURL}/responses/${second.id}/input_items?after=msg_none`, { headers: { authorization: `Bearer ${gw.keys.main}` } }));
    expect([bad.status, bad.body.error.code, bad.body.error.param]).toEqual([400, 'invalid_parameter', 'after']);
    const other = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.other!, maxRetries: 0 });
    await expect(other.responses.inputItems.list(second.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await client.responses.delete(second.id);
    await expect(client.responses.inputItems.list(second.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('refuses to stream a kept response back, which the SDK would wait on for events', async () => {
    const kept = await client.responses.create({ model: 'mock-chat', input: 'Kept' });
    const { status, body } = await errorOf(await fetch(`${gw.baseURL}/responses/${kept.id}?stream=true`, { headers: { authorization: `Bearer ${gw.keys.main}` } }));
    expect([status, body.error.code, body.error.param]).toEqual([400, 'invalid_parameter', 'stream']);
    expect(await client.responses.retrieve(kept.id, { stream: false })).toEqual(kept);
    const notStreamed = await fetch(`${gw.baseURL}/responses/${kept.id}?stream=0`, { headers: { authorization: `Bearer ${gw.keys.main}` } });
    expect(notStreamed.status).toBe(200);
  });

  it('keeps nothing sent with store: false, and shows nothing to another account', async () => {
    const unkept = await client.responses.create({ model: 'mock-chat', input: 'Not kept', store: false });
    const kept = await client.responses.create({ model: 'mock-chat', input: 'Kept' });
    const other = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.other!, maxRetries: 0 });
    for (const [who, id] of [[client, unkept.id], [other, kept.id]] as const) {
      const res = await fetch(`${gw.baseURL}/responses/${id}`, { headers: { authorization: `Bearer ${who.apiKey}` } });
      const { status, body } = await errorOf(res);
      expect([status, body.error.code, body.error.type]).toEqual([404, 'response_not_found', 'not_found_error']);
      await expect(who.responses.delete(id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    }
    const { status, body } = await errorOf(
      await fetch(`${gw.baseURL}/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.keys.other}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-chat', previous_response_id: kept.id, input: 'Steal' }),
      }),
    );
    expect([status, body.error.code]).toEqual([400, 'previous_response_not_found']);
    expect(await client.responses.retrieve(kept.id)).toEqual(kept);
  });
});

describe('a continued conversation and the account\'s credit', () => {
  it('holds credit for the whole conversation sent, so that continuing one never overdraws the account', async () => {
    const paid = await startGateway({
      credits: 3000,
      config: {
        providers: [{ id: 'oai', kind: 'openai', base_url: upstream.url, api_key: FAKE_OPENAI_KEY }],
        // A credit a token: each turn below sends about 300 more tokens than the one before.
        models: [{ id: 'gpt-paid', capabilities: ['chat'], context_window: 100_000, max_output_tokens: 10, price: { input_per_million_tokens: 1_000_000, output_per_million_tokens: 1_000_000 }, routes: [{ provider: 'oai', model: 'gpt-4o-mini' }] }],
      },
    });
    try {
      const words = Array.from({ length: 300 }, () => 'w').join(' ');
      let previous: string | undefined;
      let refused: { status: number; code: string } | undefined;
      for (let turn = 0; turn < 10 && refused === undefined; turn++) {
        const res = await fetch(`${paid.baseURL}/responses`, {
          method: 'POST',
          headers: { authorization: `Bearer ${paid.keys.main}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-paid', input: words, ...(previous === undefined ? {} : { previous_response_id: previous }) }),
        });
        if (res.status === 200) previous = ((await res.json()) as { id: string }).id;
        else refused = { status: res.status, code: (await errorOf(res)).body.error.code };
      }
      expect(refused).toEqual({ status: 402, code: 'insufficient_quota' });
      const balance = (await paid.gateway.store.getAccount('acct'))?.balanceMicros ?? NaN;
      expect(balance).toBeGreaterThanOrEqual(0);
      expect(balance).toBe(await paid.gateway.store.ledgerSum('acct'));
    } finally {
      await paid.close();
    }
  });
});

describe('responses refused with the field named', () => {
  it.each([
    ['an unknown field', { model: 'mock-chat', input: 'x', frobnicate: 1 }, 'frobnicate'],
    ['no input', { model: 'mock-chat' }, 'input'],
    ['a response to continue that is not an id', { model: 'mock-chat', input: 'x', previous_response_id: 7 }, 'previous_response_id'],
    ['a conversation, which Tollgate does not keep', { model: 'mock-chat', input: 'x', conversation: 'conv_1' }, 'conversation'],
    ['store as a string, which must not keep the response silently', { model: 'mock-chat', input: 'x', store: 'false' }, 'store'],
    ['a response to continue that Tollgate could not have made', { model: 'mock-chat', input: 'x', previous_response_id: 'resp_\u0000' }, 'previous_response_id'],
    ['a hosted tool', { model: 'mock-chat', input: 'x', tools: [{ type: 'web_search' }] }, 'tools[0].type'],
    ['an item of an unknown type', { model: 'mock-chat', input: [{ type: 'computer_call_output' }] }, 'input[0].type'],
    ['a bad image part', { model: 'mock-chat', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }] }, 'input[0].content[0].image_url'],
    ['too many output tokens, named as the Responses API names them', { model: 'mock-chat', input: 'x', max_output_tokens: 5000 }, 'max_output_tokens'],
    ['a temperature out of range', { model: 'mock-chat', input: 'x', temperature: 7 }, 'temperature'],
  ])('%s', async (_name, body, param) => {
    const { status, body: answer } = await errorOf(await post(body));
    expect(status).toBe(400);
    expect(answer.error.param).toBe(param);
  });

  it('words the pipeline\'s messages in the Responses API\'s terms', async () => {
    const { body } = await errorOf(await post({ model: 'mock-chat', input: 'x', max_output_tokens: 5000 }));
    expect(body.error.message).toContain('max_output_tokens is too large');
    expect(body.error.message).not.toContain('max_completion_tokens');
  });

  it('an unknown model is 404, as on chat completions', async () => {
    const { status, body } = await errorOf(await post({ model: 'no-such-model', input: 'x' }));
    expect([status, body.error.code]).toEqual([404, 'model_not_found']);
  });
});

describe('responses with the Vercel AI SDK (its OpenAI provider, as created by default)', () => {
  const provider = () => createOpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.main! });

  it('generates text, with usage', async () => {
    const result = await generateText({ model: provider()('mock-chat'), prompt: 'Hello gateway', maxRetries: 0 });
    expect(result.text).toBe('This is a mock reply to: Hello gateway');
    expect(result.usage.outputTokens).toBe(8);
    expect(result.finishReason).toBe('stop');
  });

  it('streams text', async () => {
    const result = streamText({ model: provider()('mock-chat'), prompt: 'Stream to me', maxRetries: 0 });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe('This is a mock reply to: Stream to me');
    expect((await result.usage).outputTokens).toBe(9);
  });

  it('carries a conversation on as the SDK sends it by default: earlier turns as references to kept items', async () => {
    const first = await generateText({ model: provider()('mock-chat'), prompt: 'First question', maxRetries: 0 });
    const second = await generateText({
      model: provider()('mock-chat'),
      messages: [{ role: 'user', content: 'First question' }, ...first.response.messages, { role: 'user', content: 'Second question' }],
      maxRetries: 0,
    });
    expect(second.text).toBe('This is a mock reply to: Second question');
    const sent = JSON.stringify(second.request.body);
    expect(sent).toContain('item_reference');
  });

  it('calls a tool', async () => {
    const result = await generateText({
      model: provider()('mock-chat'),
      prompt: 'Call lookup please',
      tools: { lookup: tool({ description: 'Looks things up', inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {} }) }) },
      toolChoice: { type: 'tool', toolName: 'lookup' },
      maxRetries: 0,
    });
    expect(result.toolCalls.map((c) => c.toolName)).toEqual(['lookup']);
  });
});
