import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import {
  FAKE_DEFAULT_TEXT,
  FAKE_FUNCTION_CALL,
  FAKE_GEMINI_API_KEY,
  FAKE_USAGE,
  SKIP_SIGNATURE,
  fakeEmbedding,
  startFakeGemini,
  type FakeGemini,
} from './gemini-server.js';

let fake: FakeGemini;

const goodHeaders = { 'content-type': 'application/json', 'x-goog-api-key': FAKE_GEMINI_API_KEY };
const goodBody = { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] };

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test inspection of arbitrary JSON

function post(call: string, body: unknown, headers: Record<string, string> = goodHeaders, model = 'gemini-2.5-flash'): Promise<Response> {
  return fetch(`${fake.url}/models/${model}:${call}`, { method: 'POST', headers, body: JSON.stringify(body) });
}

/** Parses an SSE body into its data payloads. */
function dataEvents(text: string): Json[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? '{}') as Json);
}

async function errorOf(res: Response): Promise<Json> {
  return ((await res.json()) as Json).error as Json;
}

beforeAll(async () => {
  fake = await startFakeGemini();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.behave({ kind: 'ok' });
  fake.requests.length = 0;
});

describe('fake Gemini server: keys and routes', () => {
  it('answers a missing key with 403 PERMISSION_DENIED and a wrong one with 400 API_KEY_INVALID, as Gemini does', async () => {
    const missing = await post('generateContent', goodBody, { 'content-type': 'application/json' });
    expect(missing.status).toBe(403);
    expect(await errorOf(missing)).toMatchObject({ code: 403, status: 'PERMISSION_DENIED' });

    const wrong = await post('generateContent', goodBody, { ...goodHeaders, 'x-goog-api-key': 'AIza-wrong' });
    expect(wrong.status).toBe(400);
    const error = await errorOf(wrong);
    expect(error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: 'API key not valid. Please pass a valid API key.' });
    expect(error.details[0]).toMatchObject({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' });
  });

  it('answers unknown routes with 404 and records every request', async () => {
    expect((await post('countTokens', goodBody)).status).toBe(404);
    expect((await fetch(`${fake.url}/models`, { headers: goodHeaders })).status).toBe(404);
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1beta/models/gemini-2.5-flash:countTokens', '/v1beta/models']);
  });
});

describe('fake Gemini server: request validation', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['no contents', { contents: [] }, /contents is not specified/],
    ['a bad role', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, /valid role/],
    ['empty parts', { contents: [{ role: 'user', parts: [] }] }, /must not be empty/],
    ['an empty text part', { contents: [{ role: 'user', parts: [{ text: '' }] }] }, /empty text parameter/],
    ['a snake_case field', { ...goodBody, generation_config: {} }, /Unknown name "generation_config"/],
    ['an unknown config field', { ...goodBody, generationConfig: { max_tokens: 5 } }, /Unknown name "max_tokens"/],
    ['temperature above 2', { ...goodBody, generationConfig: { temperature: 2.5 } }, /temperature/],
    ['a schema without the JSON mime type', { ...goodBody, generationConfig: { responseJsonSchema: { type: 'object' } } }, /response_mime_type/],
    ['a penalty', { ...goodBody, generationConfig: { presencePenalty: 0.5 } }, /Penalty is not enabled/],
    [
      'JSON mode beside function declarations (before Gemini 3)',
      { ...goodBody, tools: [{ functionDeclarations: [{ name: 'f' }] }], generationConfig: { responseMimeType: 'application/json' } },
      /Function calling with a response mime type/,
    ],
    [
      'more function responses than calls',
      {
        contents: [
          { role: 'user', parts: [{ text: 'x' }] },
          { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }, { functionResponse: { name: 'f', response: {} } }] },
        ],
      },
      /number of function response parts/,
    ],
    ['a signature it never issued', { contents: [{ role: 'user', parts: [{ text: 'x' }] }, { role: 'model', parts: [{ functionCall: { name: 'f' }, thoughtSignature: 'Zm9v' }] }] }, /Corrupted/],
  ];
  for (const [label, body, message] of cases) {
    it(`refuses ${label} with 400 INVALID_ARGUMENT`, async () => {
      const res = await post('generateContent', body);
      expect(res.status).toBe(400);
      const error = await errorOf(res);
      expect(error.status).toBe('INVALID_ARGUMENT');
      expect(error.message).toMatch(message);
    });
  }

  it('requires thought signatures on function calls of the current turn for Gemini 3 only', async () => {
    const history = (signature?: string): unknown => ({
      contents: [
        { role: 'user', parts: [{ text: 'Weather?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: {} }, ...(signature === undefined ? {} : { thoughtSignature: signature }) }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '18C' } } }] },
      ],
    });
    const missing = await post('generateContent', history(), goodHeaders, 'gemini-3-pro-preview');
    expect(missing.status).toBe(400);
    expect((await errorOf(missing)).message).toMatch(/missing a thought_signature/);
    expect((await post('generateContent', history(FAKE_FUNCTION_CALL.thoughtSignature), goodHeaders, 'gemini-3-pro-preview')).status).toBe(200);
    expect((await post('generateContent', history(SKIP_SIGNATURE), goodHeaders, 'gemini-3-pro-preview')).status).toBe(200);
    expect((await post('generateContent', history(), goodHeaders, 'gemini-2.5-flash')).status).toBe(200);
  });
});

describe('fake Gemini server: generation', () => {
  it('answers a GenerateContentResponse with usage', async () => {
    const res = await post('generateContent', goodBody);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.candidates).toEqual([{ content: { parts: [{ text: FAKE_DEFAULT_TEXT }], role: 'model' }, finishReason: 'STOP' }]);
    expect(body.usageMetadata).toEqual({
      promptTokenCount: FAKE_USAGE.promptTokenCount,
      candidatesTokenCount: 6,
      totalTokenCount: FAKE_USAGE.promptTokenCount + 6 + FAKE_USAGE.thoughtsTokenCount,
      cachedContentTokenCount: FAKE_USAGE.cachedContentTokenCount,
      thoughtsTokenCount: FAKE_USAGE.thoughtsTokenCount,
    });
    expect(body.responseId).toMatch(/^fakeResp/);
  });

  it('honours maxOutputTokens, stopSequences and candidateCount', async () => {
    fake.behave({ kind: 'ok', text: 'one two three four five' });
    const capped = (await (await post('generateContent', { ...goodBody, generationConfig: { maxOutputTokens: 2 } })).json()) as Json;
    expect(capped.candidates[0]).toMatchObject({ content: { parts: [{ text: 'one two ' }] }, finishReason: 'MAX_TOKENS' });
    const stopped = (await (await post('generateContent', { ...goodBody, generationConfig: { stopSequences: ['three'] } })).json()) as Json;
    expect(stopped.candidates[0]).toMatchObject({ content: { parts: [{ text: 'one two ' }] }, finishReason: 'STOP' });
    const two = (await (await post('generateContent', { ...goodBody, generationConfig: { candidateCount: 2 } })).json()) as Json;
    expect(two.candidates.map((c: Json): unknown => c.index as unknown)).toEqual([undefined, 1]);
  });

  it('streams one word per SSE event with cumulative usage, the finish reason last', async () => {
    const res = await post('streamGenerateContent?alt=sse', goodBody);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = dataEvents(await res.text());
    expect(events).toHaveLength(6);
    expect(events.map((e): string => e.candidates[0].content.parts[0].text as string).join('')).toBe(FAKE_DEFAULT_TEXT);
    expect(events.slice(0, -1).every((e) => e.candidates[0].finishReason === undefined)).toBe(true);
    expect(events[5]!.candidates[0].finishReason).toBe('STOP');
    expect(events.map((e): unknown => e.usageMetadata.candidatesTokenCount)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('streams a JSON array without alt=sse', async () => {
    const res = await post('streamGenerateContent', goodBody);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect((await res.json()) as unknown[]).toHaveLength(6);
  });

  it('calls the requested function, with a signature on the first call only', async () => {
    fake.behave({ kind: 'tool_call', calls: 2 });
    const tools = [{ functionDeclarations: [{ name: 'get_weather' }, { name: 'get_time' }] }];
    const body = (await (await post('generateContent', { ...goodBody, tools, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } } })).json()) as Json;
    expect(body.candidates[0].content.parts).toEqual([
      { functionCall: { name: 'get_time', args: FAKE_FUNCTION_CALL.args }, thoughtSignature: FAKE_FUNCTION_CALL.thoughtSignature },
      { functionCall: { name: 'get_time', args: FAKE_FUNCTION_CALL.args } },
    ]);
    expect(body.candidates[0].finishReason).toBe('STOP');
  });

  it('blocks a prompt with promptFeedback and no candidates', async () => {
    fake.behave({ kind: 'blocked' });
    const body = (await (await post('generateContent', goodBody)).json()) as Json;
    expect(body.candidates).toBeUndefined();
    expect(body.promptFeedback.blockReason).toBe('SAFETY');
  });

  it('withholds the content of a filtered candidate', async () => {
    fake.behave({ kind: 'ok', finishReason: 'SAFETY' });
    const body = (await (await post('generateContent', goodBody)).json()) as Json;
    expect(body.candidates).toEqual([{ finishReason: 'SAFETY' }]);
  });

  it('cuts a stream cleanly or ends it with an error event when told', async () => {
    fake.behave({ kind: 'cut_stream', afterChunks: 2 });
    const cut = dataEvents(await (await post('streamGenerateContent?alt=sse', goodBody)).text());
    expect(cut).toHaveLength(2);
    expect(cut.some((e) => e.candidates[0].finishReason !== undefined)).toBe(false);

    fake.behave({ kind: 'stream_error', afterChunks: 1 });
    const failed = dataEvents(await (await post('streamGenerateContent?alt=sse', goodBody)).text());
    expect(failed[1]).toEqual({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } });
  });

  it('answers errors with a Google error body, RetryInfo and Retry-After when told', async () => {
    fake.behave({ kind: 'error', status: 429, grpcStatus: 'RESOURCE_EXHAUSTED', message: 'Quota exceeded', retryDelay: '12s', retryAfter: '9' });
    const res = await post('generateContent', goodBody);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('9');
    const error = await errorOf(res);
    expect(error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Quota exceeded' });
    expect(error.details).toEqual([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12s' }]);
  });
});

describe('fake Gemini server: embeddings', () => {
  const content = (text: string): Json => ({ parts: [{ text }] });

  it('embeds one text, shortened to outputDimensionality', async () => {
    const one = (await (await post('embedContent', { content: content('hello') }, goodHeaders, 'gemini-embedding-001')).json()) as Json;
    expect(one).toEqual({ embedding: { values: fakeEmbedding('hello') } });
    const short = (await (await post('embedContent', { content: content('hello'), outputDimensionality: 3 }, goodHeaders, 'gemini-embedding-001')).json()) as Json;
    expect(short.embedding.values).toHaveLength(3);
  });

  it('embeds a batch in order, checking each request model and the batch size', async () => {
    const model = 'gemini-embedding-001';
    const requests = ['a', 'b'].map((t) => ({ model: `models/${model}`, content: content(t) }));
    const batch = (await (await post('batchEmbedContents', { requests }, goodHeaders, model)).json()) as Json;
    expect(batch).toEqual({ embeddings: [{ values: fakeEmbedding('a') }, { values: fakeEmbedding('b') }] });

    expect((await post('batchEmbedContents', { requests: [{ model: 'models/other', content: content('a') }] }, goodHeaders, model)).status).toBe(400);
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ model: `models/${model}`, content: content(`t${i}`) }));
    const res = await post('batchEmbedContents', { requests: tooMany }, goodHeaders, model);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toContain('at most 100 requests');
  });
});
