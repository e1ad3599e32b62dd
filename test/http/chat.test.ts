/** POST /v1/chat/completions through the openai SDK: answers, streams, and the 4xx of spec 7. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { errorOf, isEnvelope, startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { readSseData } from '../support/sse.js';

let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  gw = await startGateway({
    config: {
      providers: [{ id: 'mock', kind: 'mock' }, { id: 'no-tools', kind: 'mock', mock: { missing_capabilities: ['tools'] } }],
      models: [
        { id: 'mock-chat', capabilities: ['chat', 'streaming', 'tools', 'json_mode'], context_window: 200, max_output_tokens: 100, routes: [{ provider: 'mock', model: 'm' }] },
        { id: 'text-only', capabilities: ['chat'], context_window: 4096, routes: [{ provider: 'mock', model: 'm' }] },
        { id: 'tools-unserved', capabilities: ['chat', 'tools'], context_window: 4096, routes: [{ provider: 'no-tools', model: 'm' }] },
      ],
    },
  });
  client = new OpenAI({ baseURL: gw.baseURL, apiKey: gw.keys.main!, maxRetries: 0 });
});
afterAll(() => gw.close());

const post = (body: unknown) =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const user = (content: string) => [{ role: 'user' as const, content }];

describe('chat completions', () => {
  it('answers a completion in the OpenAI shape with usage', async () => {
    const completion = await client.chat.completions.create({ model: 'mock-chat', messages: user('Hello gateway') });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.content).toBe('This is a mock reply to: Hello gateway');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage?.completion_tokens).toBe(8);
  });

  it('streams a completion, with usage only when include_usage is asked', async () => {
    const withUsage = await client.chat.completions.create({ model: 'mock-chat', messages: user('Hi'), stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    for await (const chunk of withUsage) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('This is a mock reply to: Hi');
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBe(7);

    const res = await post({ model: 'mock-chat', messages: user('Hi'), stream: true });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const frames = await readSseData(res);
    expect(frames.at(-1)).toBe('[DONE]');
    expect(frames.some((f) => f.includes('"usage":{'))).toBe(false);
  });

  it('calls a tool when asked', async () => {
    const completion = await client.chat.completions.create({
      model: 'mock-chat',
      messages: user('weather please'),
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
      tool_choice: 'required',
    });
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]?.message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
  });

  it('honours max_tokens with finish_reason length', async () => {
    const completion = await client.chat.completions.create({ model: 'mock-chat', messages: user('Hi'), max_tokens: 3 });
    expect(completion.choices[0]?.finish_reason).toBe('length');
    expect(completion.usage?.completion_tokens).toBe(3);
  });
});

describe('400 invalid_request_error names the field', () => {
  it.each([
    [{ messages: user('hi') }, 'model'],
    [{ model: 'mock-chat' }, 'messages'],
    [{ model: 'mock-chat', messages: [] }, 'messages'],
    [{ model: 'mock-chat', messages: [{ role: 'wizard', content: 'hi' }] }, 'messages[0].role'],
    [{ model: 'mock-chat', messages: user('hi'), temperature: 3 }, 'temperature'],
    [{ model: 'mock-chat', messages: user('hi'), top_p: -0.1 }, 'top_p'],
    [{ model: 'mock-chat', messages: user('hi'), max_tokens: 0 }, 'max_tokens'],
    [{ model: 'mock-chat', messages: user('hi'), n: 0 }, 'n'],
    [{ model: 'mock-chat', messages: user('hi'), stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    [{ model: 'mock-chat', messages: user('hi'), tools: [{ type: 'function', function: { name: 'bad name!' } }] }, 'tools[0].function.name'],
    [{ model: 'mock-chat', messages: user('hi'), response_format: { type: 'yaml' } }, 'response_format.type'],
    [{ model: 'mock-chat', messages: user('hi'), stream: 'yes' }, 'stream'],
  ])('%j → param %s', async (body, param) => {
    const { status, requestId, body: envelope } = await errorOf(await post(body));
    expect(status).toBe(400);
    expect(requestId).toMatch(/^req_/);
    expect(isEnvelope(envelope)).toBe(true);
    expect(envelope.error.type).toBe('invalid_request_error');
    expect(envelope.error.param).toBe(param);
    expect(envelope.error.message.length).toBeGreaterThan(10);
  });

  it('is raised as BadRequestError by the openai SDK and not retried', async () => {
    const err = await client.chat.completions.create({ model: 'mock-chat', messages: user('hi'), temperature: 9 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('temperature');
  });

  it('refuses max_tokens above what the model can produce', async () => {
    const { status, body } = await errorOf(await post({ model: 'mock-chat', messages: user('hi'), max_tokens: 101 }));
    expect(status).toBe(400);
    expect(body.error.param).toBe('max_tokens');
  });
});

describe('404, 422 and 501', () => {
  it('answers 404 not_found_error for an unknown model', async () => {
    const err = await client.chat.completions.create({ model: 'gpt-nonexistent', messages: user('hi') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });

  it('answers 422 when prompt plus max_tokens exceed the context window, naming the conflict', async () => {
    const { status, body } = await errorOf(await post({ model: 'mock-chat', messages: user('word '.repeat(150)), max_tokens: 100 }));
    expect(status).toBe(422);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'context_length_exceeded', param: 'max_tokens' });
    expect(body.error.message).toMatch(/context window.*200/);
  });

  it('answers 422 when the prompt alone exceeds the context window', async () => {
    const { status, body } = await errorOf(await post({ model: 'mock-chat', messages: user('word '.repeat(400)) }));
    expect(status).toBe(422);
    expect(body.error.param).toBe('messages');
  });

  it('answers 422 for a capability the model does not have', async () => {
    const { status, body } = await errorOf(await post({ model: 'text-only', messages: user('hi'), tools: [{ type: 'function', function: { name: 'f' } }] }));
    expect(status).toBe(422);
    expect(body.error).toMatchObject({ code: 'model_capability_missing', param: 'tools' });
    const stream = await errorOf(await post({ model: 'text-only', messages: user('hi'), stream: true }));
    expect(stream.status).toBe(422);
    expect(stream.body.error.param).toBe('stream');
  });

  it('answers 422 for values that conflict with each other', async () => {
    const { status, body } = await errorOf(await post({ model: 'mock-chat', messages: user('hi'), stream_options: { include_usage: true } }));
    expect(status).toBe(422);
    expect(body.error.code).toBe('incompatible_parameters');
    expect(body.error.param).toBe('stream_options');
  });

  it('answers 501 server_error when no route adapter implements the capability', async () => {
    const res = await post({ model: 'tools-unserved', messages: user('hi'), tools: [{ type: 'function', function: { name: 'f' } }] });
    const { status, body } = await errorOf(res);
    expect(status).toBe(501);
    expect(body.error).toMatchObject({ type: 'server_error', code: 'capability_not_implemented' });
    expect(body.error.message).toContain('tools-unserved');
    expect(res.headers.get('x-should-retry')).toBe('false');
  });
});
