import { describe, it, expect } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import type { ChatCompletionRequest } from '../../protocol/chat.js';
import type { ChatCall } from '../types.js';
import { Cancellation } from '../../util/cancellation.js';
import { SKIP_SIGNATURE, geminiGeneration, toGenerateContentRequest } from './request.js';
import { toolCallId } from './tool-call-id.js';

function makeCall(request: Partial<ChatCompletionRequest> = {}, upstreamModel = 'gemini-2.5-flash'): ChatCall {
  return {
    request: { model: 'public-gemini', messages: [{ role: 'user', content: 'Hi' }], ...request },
    upstreamModel,
    signal: new Cancellation().signal,
    requestId: 'req_test_1',
    defaultMaxTokens: 1024,
  };
}

function translate(request: Partial<ChatCompletionRequest>, upstreamModel?: string) {
  return toGenerateContentRequest(makeCall(request, upstreamModel));
}

function thrown(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected a GatewayError');
}

describe('toGenerateContentRequest: basics', () => {
  it('sends user contents and the default output cap', () => {
    expect(translate({})).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      generationConfig: { maxOutputTokens: 1024 },
    });
  });

  it('prefers max_completion_tokens, then max_tokens, then the default', () => {
    expect(translate({ max_completion_tokens: 10, max_tokens: 20 }).generationConfig?.maxOutputTokens).toBe(10);
    expect(translate({ max_tokens: 20 }).generationConfig?.maxOutputTokens).toBe(20);
    expect(translate({ max_tokens: null, max_completion_tokens: null }).generationConfig?.maxOutputTokens).toBe(1024);
  });

  it('maps sampling options into generationConfig, without the penalties Gemini 2.5 and later refuse', () => {
    const config = translate({ temperature: 1.4, top_p: 0.9, stop: 'END', n: 3, seed: 7, presence_penalty: 0.5, frequency_penalty: -0.2 }).generationConfig;
    expect(config).toEqual({ maxOutputTokens: 1024, temperature: 1.4, topP: 0.9, stopSequences: ['END'], candidateCount: 3, seed: 7 });
    expect(translate({ stop: ['a', 'b'] }).generationConfig?.stopSequences).toEqual(['a', 'b']);
    expect(translate({ temperature: 0 }).generationConfig?.temperature).toBe(0);
  });

  it('keeps the low 32 bits of a seed, since Gemini refuses a larger one', () => {
    expect(translate({ seed: 2 ** 40 + 5 }).generationConfig?.seed).toBe(5);
    expect(translate({ seed: 2 ** 32 - 1 }).generationConfig?.seed).toBe(-1);
    expect(translate({ seed: -7 }).generationConfig?.seed).toBe(-7);
    expect(translate({ seed: 2 ** 31 - 1 }).generationConfig?.seed).toBe(2 ** 31 - 1);
  });

  it('leaves out n = 1, zero penalties and what Gemini has no use for', () => {
    const config = translate({ n: 1, presence_penalty: 0, frequency_penalty: 0, logit_bias: { '1': 5 }, user: 'u', stream_options: { include_usage: true }, some_future_field: 1 }).generationConfig;
    expect(config).toEqual({ maxOutputTokens: 1024 });
  });

  it('maps response_format to a JSON mime type and schema', () => {
    expect(translate({ response_format: { type: 'text' } }).generationConfig).toEqual({ maxOutputTokens: 1024 });
    expect(translate({ response_format: { type: 'json_object' } }).generationConfig?.responseMimeType).toBe('application/json');
    const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'], additionalProperties: false };
    const config = translate({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema, strict: true } } }).generationConfig;
    expect(config?.responseMimeType).toBe('application/json');
    expect(config?.responseJsonSchema).toEqual(schema);
  });

  it('refuses JSON mode beside tools before Gemini 3, which refuses the two together, and sends both from Gemini 3', () => {
    const request: Partial<ChatCompletionRequest> = {
      response_format: { type: 'json_object' },
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
    };
    for (const model of ['gemini-2.5-flash', 'gemini-flash-latest']) {
      const err = thrown(() => translate(request, model));
      expect([err.code, err.status, err.param]).toEqual(['incompatible_parameters', 422, 'response_format']);
    }
    const newer = translate(request, 'gemini-3-pro-preview');
    expect(newer.tools?.[0]?.functionDeclarations?.[0]?.name).toBe('lookup');
    expect(newer.generationConfig?.responseMimeType).toBe('application/json');
  });
});

describe('toGenerateContentRequest: refused parameters', () => {
  it('refuses logprobs and top_logprobs, naming the parameter', () => {
    const err = thrown(() => translate({ logprobs: true }));
    expect(err.code).toBe('incompatible_parameters');
    expect(err.status).toBe(422);
    expect(err.param).toBe('logprobs');
    expect(thrown(() => translate({ top_logprobs: 3 })).param).toBe('top_logprobs');
    expect(translate({ logprobs: false, top_logprobs: 0 }).contents).toHaveLength(1);
  });

  it('refuses parallel_tool_calls: false with tools only', () => {
    const tools: ChatCompletionRequest['tools'] = [{ type: 'function', function: { name: 'f' } }];
    expect(thrown(() => translate({ tools, parallel_tool_calls: false })).param).toBe('parallel_tool_calls');
    expect(translate({ parallel_tool_calls: false }).tools).toBeUndefined();
    expect(translate({ tools, parallel_tool_calls: true }).tools).toHaveLength(1);
  });
});

describe('toGenerateContentRequest: conversation shape', () => {
  it('moves system and developer messages into systemInstruction', () => {
    const body = translate({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
      ],
    });
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.\n\nAnswer in French.' }] });
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'Hi' }] }]);
  });

  it('refuses non-text parts in system messages', () => {
    const err = thrown(() => translate({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } }] }] }));
    expect(err.code).toBe('invalid_parameter');
    expect(err.param).toBe('messages[0].content[0]');
  });

  it('calls the assistant "model" and merges consecutive turns of one role, skipping empty text', () => {
    const body = translate({
      messages: [
        { role: 'user', content: 'one' },
        { role: 'user', content: [{ type: 'text', text: 'two' }, { type: 'text', text: '' }] },
        { role: 'assistant', content: 'three' },
        { role: 'assistant', content: null, refusal: 'I cannot.' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'four' },
      ],
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'one' }, { text: 'two' }] },
      { role: 'model', parts: [{ text: 'three' }, { text: 'I cannot.' }] },
      { role: 'user', parts: [{ text: 'four' }] },
    ]);
  });

  it('turns tool calls into functionCall parts and tool messages into functionResponse parts named after their call', () => {
    const body = translate({
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_b', content: '12:00' },
        { role: 'tool', tool_call_id: 'call_a', content: [{ type: 'text', text: '18C' }] },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Checking.' },
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        // In the order of the calls, whatever order the results came in.
        parts: [
          { functionResponse: { name: 'get_weather', response: { output: '18C' } } },
          { functionResponse: { name: 'get_time', response: { output: '12:00' } } },
          { text: 'Thanks' },
        ],
      },
    ]);
  });

  it('orders results by the calls across assistant messages merged into one model turn', () => {
    const call = (id: string, name: string) => ({ id, type: 'function' as const, function: { name, arguments: '{}' } });
    const body = translate({
      messages: [
        { role: 'user', content: 'Go' },
        { role: 'assistant', content: null, tool_calls: [call('a', 'f'), call('b', 'g')] },
        { role: 'assistant', content: null, tool_calls: [call('c', 'f')] },
        { role: 'tool', tool_call_id: 'a', content: 'A' },
        { role: 'tool', tool_call_id: 'b', content: 'B' },
        { role: 'tool', tool_call_id: 'c', content: 'C' },
      ],
    });
    expect(body.contents[2]?.parts.map((p) => p.functionResponse?.response)).toEqual([{ output: 'A' }, { output: 'B' }, { output: 'C' }]);
  });

  it('refuses a conversation of system messages alone with 422, as Gemini needs a turn to answer', () => {
    expect(() => translate({ messages: [{ role: 'system', content: 'Be brief.' }] })).toThrow(expect.objectContaining({ status: 422, code: 'incompatible_parameters', param: 'messages' }));
  });

  it('drops empty stop sequences, which stop nothing', () => {
    expect(translate({ messages: [{ role: 'user', content: 'x' }], stop: ['', 'END'] }).generationConfig?.stopSequences).toEqual(['END']);
    expect(translate({ messages: [{ role: 'user', content: 'x' }], stop: '' }).generationConfig?.stopSequences).toBeUndefined();
  });

  it('gives two calls of one function their own results, in the order of the calls', () => {
    const body = translate({
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_rome', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_rome', content: 'Rome: 25C' },
        { role: 'tool', tool_call_id: 'call_paris', content: 'Paris: 18C' },
      ],
    });
    expect(body.contents[2]?.parts).toEqual([
      { functionResponse: { name: 'get_weather', response: { output: 'Paris: 18C' } } },
      { functionResponse: { name: 'get_weather', response: { output: 'Rome: 25C' } } },
    ]);
  });

  it('refuses with 422 a conversation that ends with the assistant, which Gemini would not answer, naming the message', () => {
    for (const messages of [
      [{ role: 'system' as const, content: 's' }, { role: 'assistant' as const, content: 'Hi!' }],
      [{ role: 'user' as const, content: 'a' }, { role: 'assistant' as const, content: 'b' }, { role: 'user' as const, content: '' }],
    ]) {
      const err = thrown(() => translate({ messages }));
      expect(err.code).toBe('incompatible_parameters');
      expect(err.param).toBe(`messages[${messages.length - 1}]`);
    }
  });

  it('refuses with 422 a conversation whose first turn is a tool call, naming the message', () => {
    const err = thrown(() =>
      translate({
        messages: [
          { role: 'system', content: 's' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c', content: 'done' },
          { role: 'user', content: 'and?' },
        ],
      }),
    );
    expect(err.code).toBe('incompatible_parameters');
    expect(err.param).toBe('messages[1]');
    // An assistant that opens with text is a turn Gemini takes.
    expect(translate({ messages: [{ role: 'assistant', content: 'Hello.' }, { role: 'user', content: 'Hi' }] }).contents[0]?.role).toBe('model');
  });

  it('puts function responses before text in a merged user turn', () => {
    const body = translate({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'user', content: 'note' },
        { role: 'tool', tool_call_id: 'c', content: 'done' },
      ],
    });
    expect(body.contents[2]?.parts.map((p) => Object.keys(p)[0])).toEqual(['functionResponse', 'text']);
  });

  it('requires a tool_call_id that answers an earlier call, or a name', () => {
    expect(thrown(() => translate({ messages: [{ role: 'tool', content: 'x' }] })).param).toBe('messages[0].tool_call_id');
    const unknown = thrown(() => translate({ messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'nope', content: 'x' }] }));
    expect(unknown.code).toBe('invalid_parameter');
    expect(unknown.param).toBe('messages[1].tool_call_id');
    const named = translate({ messages: [{ role: 'tool', tool_call_id: 'nope', name: 'f', content: 'x' }] });
    expect(named.contents[0]?.parts[0]).toEqual({ functionResponse: { name: 'f', response: { output: 'x' } } });
  });

  it('rejects tool call arguments that are not a JSON object, naming the exact field', () => {
    for (const bad of ['{not json', '[1,2]', '"text"']) {
      const err = thrown(() =>
        translate({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: bad } }] }] }),
      );
      expect(err.code).toBe('invalid_parameter');
      expect(err.param).toBe('messages[0].tool_calls[0].function.arguments');
    }
  });

  it('rejects unknown roles', () => {
    const err = thrown(() => translate({ messages: [{ role: 'function' as 'user', content: 'x' }] }));
    expect(err.param).toBe('messages[0].role');
  });
});

describe('toGenerateContentRequest: thought signatures', () => {
  const withCalls = (...ids: string[]): Partial<ChatCompletionRequest> => ({
    messages: [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: null, tool_calls: ids.map((id) => ({ id, type: 'function' as const, function: { name: 'f', arguments: '{}' } })) },
      ...ids.map((id) => ({ role: 'tool' as const, tool_call_id: id, content: 'done' })),
    ],
  });

  it('sends back the signature carried in the tool call id', () => {
    const signature = Buffer.from([0xfb, 0xff, 0xbf, 0x01]).toString('base64'); // "+/+/AQ=="
    const parts = translate(withCalls(toolCallId(signature), toolCallId()), 'gemini-3-pro-preview').contents[1]?.parts;
    expect(parts).toEqual([{ functionCall: { name: 'f', args: {} }, thoughtSignature: signature }, { functionCall: { name: 'f', args: {} } }]);
  });

  it('gives Gemini 3 the documented stand-in on the first call of a step that has none', () => {
    const parts = translate(withCalls('toolu_from_elsewhere', 'call_2'), 'gemini-3-flash-preview').contents[1]?.parts;
    expect(parts?.[0]?.thoughtSignature).toBe(SKIP_SIGNATURE);
    expect(parts?.[1]?.thoughtSignature).toBeUndefined();
  });

  it('adds no stand-in for models before Gemini 3', () => {
    const parts = translate(withCalls('toolu_from_elsewhere'), 'gemini-2.5-pro').contents[1]?.parts;
    expect(parts?.[0]?.thoughtSignature).toBeUndefined();
  });

  it('reads the model generation from its name', () => {
    expect(geminiGeneration('gemini-3-pro-preview')).toBe(3);
    expect(geminiGeneration('models/gemini-3.1-flash')).toBe(3);
    expect(geminiGeneration('gemini-2.5-flash')).toBe(2);
    expect(geminiGeneration('gemma-3-27b-it')).toBe(0);
  });
});

describe('toGenerateContentRequest: media', () => {
  const user = (...content: NonNullable<Exclude<ChatCompletionRequest['messages'][number]['content'], string | null>>): Partial<ChatCompletionRequest> => ({
    messages: [{ role: 'user', content }],
  });

  it('sends data: URL images, audio and files inline', () => {
    const body = translate(
      user(
        { type: 'text', text: 'Compare' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
        { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
        { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } },
        { type: 'file', file: { file_data: 'JVBERi0=' } },
        { type: 'image_url', image_url: { url: 'data:image/png,%89PNG%0D%0A%1A%0A' } },
      ),
    );
    expect(body.contents[0]?.parts).toEqual([
      { text: 'Compare' },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      { inlineData: { mimeType: 'image/png', data: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString('base64') } },
    ]);
  });

  it('declares a picture under the type its bytes show, not the one its URL names', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString('base64');
    const body = translate(
      user(
        { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${png}` } },
        { type: 'image_url', image_url: { url: 'data:image/jpg;base64,AAAA' } },
        { type: 'image_url', image_url: { url: 'data:image/heic;base64,AAAA' } },
      ),
    );
    expect(body.contents[0]?.parts.map((part) => part.inlineData?.mimeType)).toEqual(['image/png', 'image/jpeg', 'image/heic']);
  });

  it('refuses with 422 pictures Gemini does not read (GIF, SVG), naming the URL', () => {
    const gif = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1').toString('base64');
    for (const url of [`data:image/gif;base64,${gif}`, `data:image/png;base64,${gif}`, 'data:image/svg+xml,%3Csvg%2F%3E']) {
      const err = thrown(() => translate(user({ type: 'image_url', image_url: { url } })));
      expect(err.code).toBe('incompatible_parameters');
      expect(err.param).toBe('messages[0].content[0].image_url.url');
    }
  });

  it('refuses a percent-encoded data: URL whose escapes are not two hex digits', () => {
    const err = thrown(() => translate(user({ type: 'image_url', image_url: { url: 'data:image/png,%8' } })));
    expect(err.code).toBe('invalid_parameter');
    expect(err.param).toBe('messages[0].content[0].image_url.url');
  });

  it('refuses http(s) image URLs with 422, naming the URL', () => {
    const err = thrown(() => translate(user({ type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } })));
    expect(err.code).toBe('incompatible_parameters');
    expect(err.status).toBe(422);
    expect(err.param).toBe('messages[0].content[0].image_url.url');
  });

  it('refuses other URL schemes, non-image data and files by id', () => {
    expect(thrown(() => translate(user({ type: 'image_url', image_url: { url: 'ftp://example.com/a.png' } }))).code).toBe('invalid_parameter');
    expect(thrown(() => translate(user({ type: 'image_url', image_url: { url: 'data:text/plain;base64,AA==' } }))).code).toBe('incompatible_parameters');
    expect(thrown(() => translate(user({ type: 'image_url', image_url: { url: 'data:;base64,AA==' } }))).code).toBe('invalid_parameter');
    const byId = thrown(() => translate(user({ type: 'file', file: { file_id: 'file-abc' } })));
    expect(byId.code).toBe('incompatible_parameters');
    expect(byId.param).toBe('messages[0].content[0].file');
  });
});

describe('toGenerateContentRequest: tools', () => {
  const tools: ChatCompletionRequest['tools'] = [
    { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true } },
    { type: 'function', function: { name: 'now' } },
  ];

  it('declares functions with their JSON Schema parameters', () => {
    expect(translate({ tools }).tools).toEqual([
      {
        functionDeclarations: [
          { name: 'get_weather', description: 'Weather by city', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } },
          { name: 'now' },
        ],
      },
    ]);
  });

  it('maps tool_choice to functionCallingConfig', () => {
    expect(translate({ tools }).toolConfig).toBeUndefined();
    expect(translate({ tools, tool_choice: 'auto' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(translate({ tools, tool_choice: 'none' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(translate({ tools, tool_choice: 'required' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(translate({ tools, tool_choice: { type: 'function', function: { name: 'now' } } }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['now'] },
    });
  });

  it('refuses with 422 a function name Gemini refuses (one not starting with a letter or underscore), naming it', () => {
    for (const name of ['1password_lookup', '-x']) {
      const err = thrown(() => translate({ tools: [tools[0]!, { type: 'function', function: { name } }] }));
      expect(err.code).toBe('incompatible_parameters');
      expect(err.param).toBe('tools[1].function.name');
    }
    expect(translate({ tools: [{ type: 'function', function: { name: '_private' } }] }).tools?.[0]?.functionDeclarations[0]?.name).toBe('_private');
  });

  it('sends no tool config without tools', () => {
    const body = translate({ tools: [], tool_choice: 'required' });
    expect(body.tools).toBeUndefined();
    expect(body.toolConfig).toBeUndefined();
  });
});
