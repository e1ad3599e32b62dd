/**
 * The fake is only useful if the real client accepts it: these tests drive it with the official
 * `openai` SDK, plus raw fetches for framing details the SDK hides.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FAKE_DEFAULT_REPLY, FAKE_OPENAI_KEY, startFakeOpenAI, type FakeOpenAI } from './openai-server.js';

let fake: FakeOpenAI;
let client: OpenAI;
const messages = [{ role: 'user' as const, content: 'Say hello' }];

function post(body: unknown, key = FAKE_OPENAI_KEY): Promise<Response> {
  return fetch(`${fake.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
}

/** The data lines of an SSE body, in order. */
function dataLines(text: string): string[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice('data: '.length));
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  client = new OpenAI({ apiKey: FAKE_OPENAI_KEY, baseURL: fake.url, maxRetries: 0 });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.behave({ kind: 'ok' });
  fake.requests.length = 0;
});

describe('fake OpenAI server', () => {
  it('answers a chat.completion the SDK reads, and records the request', async () => {
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, temperature: 0 });
    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.model).toBe('gpt-4o-mini');
    expect(completion.system_fingerprint).toMatch(/^fp_/);
    expect(completion.choices[0]?.message.content).toBe(FAKE_DEFAULT_REPLY);
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 7, total_tokens: 15 });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.path).toBe('/v1/chat/completions');
    expect(fake.requests[0]?.body).toEqual({ model: 'gpt-4o-mini', messages, temperature: 0 });
  });

  it('honours a custom reply, max_tokens and n', async () => {
    fake.behave({ kind: 'ok', text: 'one two three four' });
    const completion = await client.chat.completions.create({ model: 'm', messages, max_tokens: 2, n: 2 });
    expect(completion.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, 'one two ', 'length'],
      [1, 'one two ', 'length'],
    ]);
    expect(completion.usage?.completion_tokens).toBe(4);
  });

  it('streams chunks the SDK reads, with the usage chunk only when asked', async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } });
    let text = '';
    const finishes: string[] = [];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      text += chunk.choices[0]?.delta.content ?? '';
      for (const choice of chunk.choices) if (choice.finish_reason) finishes.push(choice.finish_reason);
      if (chunk.choices.length === 0) usage = chunk.usage;
      else expect(chunk.usage).toBeNull();
    }
    expect(text).toBe(FAKE_DEFAULT_REPLY);
    expect(finishes).toEqual(['stop']);
    expect(usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 7, total_tokens: 15 });

    const plain = await (await post({ model: 'm', messages, stream: true })).text();
    const lines = dataLines(plain);
    expect(lines.at(-1)).toBe('[DONE]');
    expect(lines.slice(0, -1).every((line) => !line.includes('"usage"'))).toBe(true);
  });

  it('answers tool calls, whole and streamed, that the SDK assembles', async () => {
    fake.behave({ kind: 'tool_call' });
    const tools = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];
    const whole = await client.chat.completions.create({ model: 'm', messages, tools });
    const call = whole.choices[0]?.message.tool_calls?.[0];
    expect(whole.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' ? call.function : undefined).toEqual({ name: 'lookup', arguments: '{"location":"Paris, France","unit":"celsius"}' });

    const runner = client.chat.completions.stream({ model: 'm', messages, tools });
    const final = await runner.finalChatCompletion();
    const streamed = final.choices[0]?.message.tool_calls?.[0];
    expect(streamed?.type === 'function' ? JSON.parse(streamed.function.arguments) : undefined).toEqual({ location: 'Paris, France', unit: 'celsius' });
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it("rejects a wrong key with OpenAI's 401 body, masking the key", async () => {
    const wrong = new OpenAI({ apiKey: 'sk-wrong-1234567890abcd', baseURL: fake.url, maxRetries: 0 });
    const error = await wrong.chat.completions.create({ model: 'm', messages }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    const apiError = error as InstanceType<typeof OpenAI.AuthenticationError>;
    expect(apiError.status).toBe(401);
    expect(apiError.code).toBe('invalid_api_key');
    expect(apiError.type).toBe('invalid_request_error');
    expect(apiError.message).toContain('abcd');
    expect(apiError.message).not.toContain('sk-wrong-1234567890abcd');
  });

  it('sends the configured error with its status, body and Retry-After', async () => {
    fake.behave({ kind: 'error', status: 429, type: 'requests', code: 'rate_limit_exceeded', message: 'Slow down.', retryAfter: '3' });
    const res = await post({ model: 'm', messages });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(await res.json()).toEqual({ error: { message: 'Slow down.', type: 'requests', param: null, code: 'rate_limit_exceeded' } });

    fake.behave({ kind: 'error', status: 400, type: 'invalid_request_error', code: null, message: 'Bad.', param: 'messages' });
    const error = await client.chat.completions.create({ model: 'm', messages }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('messages');
  });

  it('malformed and non-JSON answers are what they claim', async () => {
    fake.behave({ kind: 'malformed' });
    const broken = await post({ model: 'm', messages });
    expect(broken.headers.get('content-type')).toBe('application/json');
    await expect(broken.json()).rejects.toThrow();
    expect(await (await post({ model: 'm', messages, stream: true })).text()).toBe('data: this is not json\n\n');

    fake.behave({ kind: 'not_json_content_type' });
    const html = await post({ model: 'm', messages, stream: true });
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toContain('text/html');
  });

  it('cuts a stream without [DONE], or ends it with an error frame the SDK raises', async () => {
    fake.behave({ kind: 'cut_stream', afterChunks: 2 });
    const cut = dataLines(await (await post({ model: 'm', messages, stream: true })).text());
    expect(cut).toHaveLength(3);
    expect(cut).not.toContain('[DONE]');

    fake.behave({ kind: 'stream_error', afterChunks: 1 });
    const stream = await client.chat.completions.create({ model: 'm', messages, stream: true });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['', 'Hello! ']);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain('The server had an error');
  });

  it('hang never answers, and close still returns promptly', async () => {
    const own = await startFakeOpenAI();
    own.behave({ kind: 'hang' });
    const pending = fetch(`${own.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${FAKE_OPENAI_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages }),
    }).then(
      () => 'answered',
      () => 'failed',
    );
    const early = await Promise.race([pending, new Promise((resolve) => setTimeout(() => resolve('waiting'), 100))]);
    expect(early).toBe('waiting');
    expect(own.requests).toHaveLength(1);
    const started = Date.now();
    await own.close();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await pending).toBe('failed');
  });
});
