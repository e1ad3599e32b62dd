import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/index.js';
import { validateChatRequest } from './chat-request.js';

const user = (content: unknown = 'Hello') => ({ role: 'user', content });
const minimal = () => ({ model: 'gpt-4o-mini', messages: [user()] });
const weatherTool = (name = 'get_weather') => ({
  type: 'function',
  function: { name, description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true },
});

/** The request `minimal()` plus `extra` top-level fields. */
const withFields = (extra: Record<string, unknown>) => ({ ...minimal(), ...extra });
const withMessage = (message: unknown) => ({ model: 'm', messages: [message] });

function errorOf(body: unknown): GatewayError {
  try {
    validateChatRequest(body);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error(`expected ${JSON.stringify(body)} to be rejected`);
}

describe('validateChatRequest: valid requests', () => {
  it('accepts a minimal request and returns the same object', () => {
    const body = minimal();
    expect(validateChatRequest(body)).toBe(body);
  });

  it('accepts a maximal request, keeping unknown top-level and inner fields', () => {
    const body = {
      model: 'gpt-4o',
      messages: [
        { role: 'developer', content: 'Be terse.', name: 'policy' },
        { role: 'system', content: [{ type: 'text', text: 'You are helpful.' }] },
        {
          role: 'user',
          name: 'ann',
          content: [
            { type: 'text', text: 'What is in these?', cache_control: { type: 'ephemeral' } },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'high' } },
            { type: 'input_audio', input_audio: { data: 'UklGR...', format: 'wav' } },
            { type: 'file', file: { file_id: 'file-abc', filename: 'a.pdf' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
          reasoning_content: 'provider extension',
        },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '{"temp": 3}' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Cold.' }, { type: 'refusal', refusal: 'no' }], refusal: null },
        { role: 'user', content: 'Thanks' },
      ],
      frequency_penalty: -2,
      presence_penalty: 2,
      logit_bias: { '50256': -100, '1234': 100 },
      logprobs: true,
      top_logprobs: 20,
      max_tokens: 512,
      max_completion_tokens: 512,
      n: 128,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'weather_report-1', description: 'A report', schema: { type: 'object' }, strict: true },
      },
      seed: -42,
      stop: ['\n\n', 'END'],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0,
      top_p: 1,
      tools: [weatherTool()],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      user: 'user-123',
      store: false,
      metadata: { team: 'search' },
      reasoning_effort: 'low',
      service_tier: 'auto',
      prediction: { type: 'content', content: 'x' },
      vendor_extension: { anything: [1, 2, 3] },
    };
    const snapshot = structuredClone(body);
    const result = validateChatRequest(body);
    expect(result).toBe(body);
    expect(result).toEqual(snapshot);
    expect(result.vendor_extension).toEqual({ anything: [1, 2, 3] });
  });

  it.each([
    ['nulls for nullable fields', { temperature: null, top_p: null, n: null, stop: null, seed: null, logit_bias: null, stream: null, stream_options: null, metadata: null }],
    ['a single stop string', { stop: 'END' }],
    ['tool_choice none/auto without tools', { tool_choice: 'auto' }],
    ['equal max_tokens and max_completion_tokens', { max_tokens: 10, max_completion_tokens: 10 }],
    ['max_tokens with null max_completion_tokens', { max_tokens: 10, max_completion_tokens: null }],
    ['response_format text', { response_format: { type: 'text' } }],
    ['response_format json_object', { response_format: { type: 'json_object' } }],
    ['top_logprobs null without logprobs', { top_logprobs: null }],
    ['tool_choice required with tools', { tools: [weatherTool()], tool_choice: 'required', parallel_tool_calls: true }],
  ])('accepts %s', (_name, extra) => {
    expect(() => validateChatRequest(withFields(extra))).not.toThrow();
  });

  it('accepts an assistant message with tool_calls and no content', () => {
    const body = {
      model: 'm',
      messages: [user(), { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }],
    };
    expect(() => validateChatRequest(body)).not.toThrow();
  });
});

describe('validateChatRequest: the body', () => {
  it.each([
    ['an array', [], 'array'],
    ['null', null, 'null'],
    ['a string', 'hi', 'string'],
    ['a number', 42, 'number'],
  ])('rejects %s', (_name, body, got) => {
    const err = errorOf(body);
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_parameter');
    expect(err.param).toBeNull();
    expect(err.message).toBe(`The request body must be a JSON object, got ${got}.`);
  });
});

interface Case {
  name: string;
  body: unknown;
  code: 'invalid_parameter' | 'missing_required_parameter';
  param: string;
  message?: string | RegExp;
}

const badFields: Case[] = [
  // model
  { name: 'missing model', body: { messages: [user()] }, code: 'missing_required_parameter', param: 'model', message: "Missing required parameter: 'model'." },
  { name: 'numeric model', body: { model: 4, messages: [user()] }, code: 'invalid_parameter', param: 'model', message: 'model must be a string, got number.' },
  { name: 'empty model', body: { model: '', messages: [user()] }, code: 'invalid_parameter', param: 'model', message: 'model must be a non-empty string.' },
  // messages
  { name: 'missing messages', body: { model: 'm' }, code: 'missing_required_parameter', param: 'messages' },
  { name: 'messages not an array', body: { model: 'm', messages: 'hi' }, code: 'invalid_parameter', param: 'messages', message: 'messages must be an array of message objects, got string.' },
  { name: 'empty messages', body: { model: 'm', messages: [] }, code: 'invalid_parameter', param: 'messages', message: 'messages must contain at least 1 item, got 0.' },
  { name: 'message not an object', body: { model: 'm', messages: ['hi'] }, code: 'invalid_parameter', param: 'messages[0]', message: 'messages[0] must be a message object, got string.' },
  { name: 'missing role', body: withMessage({ content: 'x' }), code: 'missing_required_parameter', param: 'messages[0].role' },
  { name: 'numeric role', body: withMessage({ role: 1, content: 'x' }), code: 'invalid_parameter', param: 'messages[0].role', message: 'messages[0].role must be a string, got number.' },
  {
    name: 'unknown role',
    body: withMessage({ role: 'robot', content: 'x' }),
    code: 'invalid_parameter',
    param: 'messages[0].role',
    message: 'messages[0].role must be one of "system", "developer", "user", "assistant" or "tool", got "robot".',
  },
  { name: 'legacy function role', body: withMessage({ role: 'function', name: 'f', content: 'x' }), code: 'invalid_parameter', param: 'messages[0].role', message: /messages\[0\]\.role "function" is not supported: it is the legacy function-calling role; send .* "tool" message/ },
  { name: 'missing user content', body: withMessage({ role: 'user' }), code: 'missing_required_parameter', param: 'messages[0].content' },
  { name: 'numeric content', body: withMessage(user(5)), code: 'invalid_parameter', param: 'messages[0].content', message: 'messages[0].content must be a string or an array of content parts, got number.' },
  { name: 'null user content', body: withMessage(user(null)), code: 'invalid_parameter', param: 'messages[0].content', message: 'messages[0].content must be a string or an array of content parts, got null.' },
  { name: 'empty parts array', body: withMessage(user([])), code: 'invalid_parameter', param: 'messages[0].content', message: 'messages[0].content must contain at least 1 item, got 0.' },
  { name: 'part not an object', body: withMessage(user(['hi'])), code: 'invalid_parameter', param: 'messages[0].content[0]', message: 'messages[0].content[0] must be a content part object, got string.' },
  { name: 'part without text', body: withMessage(user([{ type: 'text' }])), code: 'missing_required_parameter', param: 'messages[0].content[0].text' },
  { name: 'part with numeric text', body: withMessage(user([{ type: 'text', text: 1 }])), code: 'invalid_parameter', param: 'messages[0].content[0].text', message: 'messages[0].content[0].text must be a string, got number.' },
  { name: 'unknown part type', body: withMessage(user([{ type: 'video', video: {} }])), code: 'invalid_parameter', param: 'messages[0].content[0].type', message: /^messages\[0\]\.content\[0\]\.type must be one of "text", "image_url", "input_audio" or "file" for content parts of user messages, got "video"\.$/ },
  { name: 'image in a system message', body: withMessage({ role: 'system', content: [{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'u' } }] }), code: 'invalid_parameter', param: 'messages[0].content[1].type', message: 'messages[0].content[1].type must be "text" for content parts of system and developer messages, got "image_url".' },
  { name: 'refusal part in a user message', body: withMessage(user([{ type: 'refusal', refusal: 'no' }])), code: 'invalid_parameter', param: 'messages[0].content[0].type' },
  { name: 'image without url', body: withMessage(user([{ type: 'image_url', image_url: {} }])), code: 'missing_required_parameter', param: 'messages[0].content[0].image_url.url' },
  { name: 'bad image detail', body: withMessage(user([{ type: 'image_url', image_url: { url: 'u', detail: 'ultra' } }])), code: 'invalid_parameter', param: 'messages[0].content[0].image_url.detail', message: 'messages[0].content[0].image_url.detail must be one of "auto", "low" or "high", got "ultra".' },
  { name: 'bad audio format', body: withMessage(user([{ type: 'input_audio', input_audio: { data: 'x', format: 'ogg' } }])), code: 'invalid_parameter', param: 'messages[0].content[0].input_audio.format', message: 'messages[0].content[0].input_audio.format must be "wav" or "mp3", got "ogg".' },
  { name: 'numeric file_id', body: withMessage(user([{ type: 'file', file: { file_id: 7 } }])), code: 'invalid_parameter', param: 'messages[0].content[0].file.file_id' },
  { name: 'numeric message name', body: withMessage({ role: 'user', content: 'x', name: 3 }), code: 'invalid_parameter', param: 'messages[0].name' },
  { name: 'assistant without content or tool_calls', body: withMessage({ role: 'assistant' }), code: 'missing_required_parameter', param: 'messages[0].content', message: /assistant message needs content unless it has tool_calls/ },
  { name: 'assistant null content without tool_calls', body: withMessage({ role: 'assistant', content: null }), code: 'invalid_parameter', param: 'messages[0].content', message: /may be null only in an assistant message with tool_calls/ },
  { name: 'assistant numeric content', body: withMessage({ role: 'assistant', content: 1 }), code: 'invalid_parameter', param: 'messages[0].content', message: 'messages[0].content must be a string, an array of content parts, or null, got number.' },
  { name: 'empty tool_calls', body: withMessage({ role: 'assistant', content: 'x', tool_calls: [] }), code: 'invalid_parameter', param: 'messages[0].tool_calls' },
  { name: 'tool call without id', body: withMessage({ role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }), code: 'missing_required_parameter', param: 'messages[0].tool_calls[0].id' },
  { name: 'tool call of another type', body: withMessage({ role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'f', input: '' } }] }), code: 'invalid_parameter', param: 'messages[0].tool_calls[0].type', message: 'messages[0].tool_calls[0].type must be "function", got "custom".' },
  { name: 'tool call arguments as object', body: withMessage({ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }] }), code: 'invalid_parameter', param: 'messages[0].tool_calls[0].function.arguments', message: 'messages[0].tool_calls[0].function.arguments must be a string, got object.' },
  { name: 'tool message without tool_call_id', body: withMessage({ role: 'tool', content: 'x' }), code: 'missing_required_parameter', param: 'messages[0].tool_call_id' },
  { name: 'tool message without content', body: withMessage({ role: 'tool', tool_call_id: 'c' }), code: 'missing_required_parameter', param: 'messages[0].content' },
  { name: 'error in a later message', body: { model: 'm', messages: [user(), user(), { role: 'user', content: [{ type: 'text', text: 'ok' }, { type: 'text', text: false }] }] }, code: 'invalid_parameter', param: 'messages[2].content[1].text' },
  // sampling and limits
  { name: 'frequency_penalty too high', body: withFields({ frequency_penalty: 2.5 }), code: 'invalid_parameter', param: 'frequency_penalty', message: 'frequency_penalty must be a number between -2 and 2, got 2.5.' },
  { name: 'presence_penalty as string', body: withFields({ presence_penalty: '1' }), code: 'invalid_parameter', param: 'presence_penalty', message: 'presence_penalty must be a number or null, got string.' },
  { name: 'logit_bias value out of range', body: withFields({ logit_bias: { '50256': 101 } }), code: 'invalid_parameter', param: 'logit_bias["50256"]', message: 'logit_bias["50256"] must be a number between -100 and 100, got 101.' },
  { name: 'logit_bias keyed by a word', body: withFields({ logit_bias: { fox: 5 } }), code: 'invalid_parameter', param: 'logit_bias', message: 'logit_bias has an invalid key "fox": keys must be token ids (whole numbers, such as "50256").' },
  { name: 'logit_bias as array', body: withFields({ logit_bias: [1] }), code: 'invalid_parameter', param: 'logit_bias', message: 'logit_bias must be an object mapping token ids to numbers or null, got array.' },
  { name: 'logprobs as string', body: withFields({ logprobs: 'yes' }), code: 'invalid_parameter', param: 'logprobs', message: 'logprobs must be a boolean or null, got string.' },
  { name: 'top_logprobs too high', body: withFields({ logprobs: true, top_logprobs: 21 }), code: 'invalid_parameter', param: 'top_logprobs', message: 'top_logprobs must be an integer between 0 and 20, got 21.' },
  { name: 'max_tokens zero', body: withFields({ max_tokens: 0 }), code: 'invalid_parameter', param: 'max_tokens', message: 'max_tokens must be an integer of at least 1, got 0.' },
  { name: 'max_completion_tokens fractional', body: withFields({ max_completion_tokens: 10.5 }), code: 'invalid_parameter', param: 'max_completion_tokens', message: 'max_completion_tokens must be an integer or null, got 10.5.' },
  { name: 'n too high', body: withFields({ n: 129 }), code: 'invalid_parameter', param: 'n', message: 'n must be an integer between 1 and 128, got 129.' },
  { name: 'seed fractional', body: withFields({ seed: 1.5 }), code: 'invalid_parameter', param: 'seed', message: 'seed must be an integer or null, got 1.5.' },
  { name: 'stop as number', body: withFields({ stop: 5 }), code: 'invalid_parameter', param: 'stop', message: 'stop must be a string, an array of 1 to 4 strings, or null, got number.' },
  { name: 'five stop strings', body: withFields({ stop: ['a', 'b', 'c', 'd', 'e'] }), code: 'invalid_parameter', param: 'stop', message: 'stop must contain at most 4 items, got 5.' },
  { name: 'empty stop array', body: withFields({ stop: [] }), code: 'invalid_parameter', param: 'stop', message: 'stop must contain at least 1 item, got 0.' },
  { name: 'stop array with a number', body: withFields({ stop: ['a', 2] }), code: 'invalid_parameter', param: 'stop[1]', message: 'stop[1] must be a string, got number.' },
  { name: 'stream as string', body: withFields({ stream: 'true' }), code: 'invalid_parameter', param: 'stream', message: 'stream must be a boolean or null, got string.' },
  { name: 'stream_options as boolean', body: withFields({ stream: true, stream_options: true }), code: 'invalid_parameter', param: 'stream_options', message: 'stream_options must be an object or null, got boolean.' },
  { name: 'include_usage as string', body: withFields({ stream: true, stream_options: { include_usage: 'yes' } }), code: 'invalid_parameter', param: 'stream_options.include_usage', message: 'stream_options.include_usage must be a boolean, got string.' },
  { name: 'temperature too high', body: withFields({ temperature: 2.1 }), code: 'invalid_parameter', param: 'temperature', message: 'temperature must be a number between 0 and 2, got 2.1.' },
  { name: 'negative temperature', body: withFields({ temperature: -0.1 }), code: 'invalid_parameter', param: 'temperature' },
  { name: 'top_p too high', body: withFields({ top_p: 1.01 }), code: 'invalid_parameter', param: 'top_p', message: 'top_p must be a number between 0 and 1, got 1.01.' },
  // response_format
  { name: 'response_format as string', body: withFields({ response_format: 'json' }), code: 'invalid_parameter', param: 'response_format', message: 'response_format must be an object such as {"type": "json_object"}, got string.' },
  { name: 'response_format without type', body: withFields({ response_format: {} }), code: 'missing_required_parameter', param: 'response_format.type' },
  { name: 'unknown response_format type', body: withFields({ response_format: { type: 'xml' } }), code: 'invalid_parameter', param: 'response_format.type', message: 'response_format.type must be one of "text", "json_object" or "json_schema", got "xml".' },
  { name: 'json_schema missing', body: withFields({ response_format: { type: 'json_schema' } }), code: 'missing_required_parameter', param: 'response_format.json_schema' },
  { name: 'json_schema without name', body: withFields({ response_format: { type: 'json_schema', json_schema: { schema: {} } } }), code: 'missing_required_parameter', param: 'response_format.json_schema.name' },
  { name: 'json_schema bad name', body: withFields({ response_format: { type: 'json_schema', json_schema: { name: 'my schema' } } }), code: 'invalid_parameter', param: 'response_format.json_schema.name', message: 'response_format.json_schema.name must be a name of 1 to 64 letters, digits, underscores or dashes, got "my schema".' },
  { name: 'json_schema name too long', body: withFields({ response_format: { type: 'json_schema', json_schema: { name: 'a'.repeat(65) } } }), code: 'invalid_parameter', param: 'response_format.json_schema.name' },
  { name: 'json_schema schema as string', body: withFields({ response_format: { type: 'json_schema', json_schema: { name: 'n', schema: '{}' } } }), code: 'invalid_parameter', param: 'response_format.json_schema.schema', message: 'response_format.json_schema.schema must be a JSON Schema object, got string.' },
  { name: 'json_schema strict as string', body: withFields({ response_format: { type: 'json_schema', json_schema: { name: 'n', strict: 'yes' } } }), code: 'invalid_parameter', param: 'response_format.json_schema.strict', message: 'response_format.json_schema.strict must be a boolean or null, got string.' },
  // tools
  { name: 'tools as object', body: withFields({ tools: {} }), code: 'invalid_parameter', param: 'tools', message: 'tools must be an array of tool objects, got object.' },
  { name: '129 tools', body: withFields({ tools: Array.from({ length: 129 }, (_, i) => weatherTool(`f${i}`)) }), code: 'invalid_parameter', param: 'tools', message: 'tools must contain at most 128 items, got 129.' },
  { name: 'tool of another type', body: withFields({ tools: [{ type: 'custom', custom: { name: 'x' } }] }), code: 'invalid_parameter', param: 'tools[0].type', message: 'tools[0].type must be "function", got "custom".' },
  { name: 'tool without function', body: withFields({ tools: [{ type: 'function' }] }), code: 'missing_required_parameter', param: 'tools[0].function' },
  { name: 'tool without name', body: withFields({ tools: [{ type: 'function', function: {} }] }), code: 'missing_required_parameter', param: 'tools[0].function.name' },
  { name: 'tool with bad name', body: withFields({ tools: [weatherTool(), weatherTool(), weatherTool('get weather')] }), code: 'invalid_parameter', param: 'tools[2].function.name', message: 'tools[2].function.name must be a name of 1 to 64 letters, digits, underscores or dashes, got "get weather".' },
  { name: 'tool parameters as array', body: withFields({ tools: [{ type: 'function', function: { name: 'f', parameters: [] } }] }), code: 'invalid_parameter', param: 'tools[0].function.parameters', message: 'tools[0].function.parameters must be a JSON Schema object, got array.' },
  { name: 'tool description as number', body: withFields({ tools: [{ type: 'function', function: { name: 'f', description: 1 } }] }), code: 'invalid_parameter', param: 'tools[0].function.description' },
  { name: 'tool strict as string', body: withFields({ tools: [{ type: 'function', function: { name: 'f', strict: 'true' } }] }), code: 'invalid_parameter', param: 'tools[0].function.strict' },
  { name: 'unknown tool_choice string', body: withFields({ tool_choice: 'any' }), code: 'invalid_parameter', param: 'tool_choice', message: 'tool_choice must be "none", "auto", "required" or an object {"type": "function", "function": {"name": ...}}, got "any".' },
  { name: 'tool_choice as number', body: withFields({ tool_choice: 1 }), code: 'invalid_parameter', param: 'tool_choice', message: /^tool_choice must be "none", "auto", "required" or an object .*, got number\.$/ },
  { name: 'tool_choice object without function', body: withFields({ tools: [weatherTool()], tool_choice: { type: 'function' } }), code: 'missing_required_parameter', param: 'tool_choice.function' },
  { name: 'tool_choice of another type', body: withFields({ tools: [weatherTool()], tool_choice: { type: 'allowed_tools', allowed_tools: {} } }), code: 'invalid_parameter', param: 'tool_choice.type', message: 'tool_choice.type must be "function", got "allowed_tools".' },
  { name: 'tool_choice object with numeric name', body: withFields({ tools: [weatherTool()], tool_choice: { type: 'function', function: { name: 1 } } }), code: 'invalid_parameter', param: 'tool_choice.function.name' },
  { name: 'parallel_tool_calls as null', body: withFields({ tools: [weatherTool()], parallel_tool_calls: null }), code: 'invalid_parameter', param: 'parallel_tool_calls', message: 'parallel_tool_calls must be a boolean, got null.' },
  { name: 'user as number', body: withFields({ user: 42 }), code: 'invalid_parameter', param: 'user', message: 'user must be a string, got number.' },
  // newer fields
  { name: 'store as string', body: withFields({ store: 'yes' }), code: 'invalid_parameter', param: 'store' },
  { name: 'metadata with a number value', body: withFields({ metadata: { a: 1 } }), code: 'invalid_parameter', param: 'metadata.a', message: 'metadata.a must be a string, got number.' },
  { name: 'metadata with 17 keys', body: withFields({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }), code: 'invalid_parameter', param: 'metadata', message: 'metadata must have at most 16 keys, got 17.' },
  { name: 'metadata with a long key', body: withFields({ metadata: { ['k'.repeat(65)]: 'v' } }), code: 'invalid_parameter', param: 'metadata', message: /^metadata has an invalid key "k{60}…": keys must be at most 64 characters long\.$/ },
  { name: 'metadata with a long value', body: withFields({ metadata: { k: 'v'.repeat(513) } }), code: 'invalid_parameter', param: 'metadata.k', message: 'metadata.k must be at most 512 characters long, got 513.' },
  { name: 'unknown reasoning_effort', body: withFields({ reasoning_effort: 'max' }), code: 'invalid_parameter', param: 'reasoning_effort', message: 'reasoning_effort must be one of "none", "minimal", "low", "medium", "high", "xhigh" or null, got "max".' },
  { name: 'service_tier as number', body: withFields({ service_tier: 1 }), code: 'invalid_parameter', param: 'service_tier', message: 'service_tier must be a string or null, got number.' },
];

describe('validateChatRequest: bad values (400)', () => {
  it.each(badFields)('$name → $code at $param', ({ body, code, param, message }) => {
    const err = errorOf(body);
    expect({ status: err.status, code: err.code, param: err.param }).toEqual({ status: 400, code, param });
    if (typeof message === 'string') expect(err.message).toBe(message);
    else if (message) expect(err.message).toMatch(message);
  });

  it('never shows Ajv wording, and always names the param in the message', () => {
    for (const { body } of badFields) {
      const err = errorOf(body);
      expect(err.message).not.toMatch(/oneOf|anyOf|must match|NaN|undefined|\[object Object\]/);
      expect(err.message).toContain(err.param ?? '');
    }
  });
});

const crossField: Array<{ name: string; extra: Record<string, unknown>; param: string; message: string | RegExp }> = [
  { name: 'stream_options without stream', extra: { stream_options: { include_usage: true } }, param: 'stream_options', message: 'stream_options is only allowed when stream is true.' },
  { name: 'stream_options with stream false', extra: { stream: false, stream_options: {} }, param: 'stream_options', message: /only allowed when stream is true/ },
  { name: 'different max_tokens and max_completion_tokens', extra: { max_tokens: 100, max_completion_tokens: 200 }, param: 'max_tokens', message: /^max_tokens \(100\) and max_completion_tokens \(200\) are both set, to different values; send only max_completion_tokens/ },
  { name: 'top_logprobs without logprobs', extra: { top_logprobs: 5 }, param: 'top_logprobs', message: 'top_logprobs is only allowed when logprobs is true.' },
  { name: 'top_logprobs with logprobs false', extra: { logprobs: false, top_logprobs: 0 }, param: 'top_logprobs', message: /logprobs is true/ },
  { name: 'tool_choice required without tools', extra: { tool_choice: 'required' }, param: 'tool_choice', message: 'tool_choice "required" requires tools, but no tools were given.' },
  { name: 'tool_choice required with empty tools', extra: { tools: [], tool_choice: 'required' }, param: 'tool_choice', message: /requires tools/ },
  { name: 'tool_choice function without tools', extra: { tool_choice: { type: 'function', function: { name: 'get_weather' } } }, param: 'tool_choice', message: 'tool_choice naming function "get_weather" requires tools, but no tools were given.' },
  { name: 'tool_choice naming an unknown function', extra: { tools: [weatherTool()], tool_choice: { type: 'function', function: { name: 'get_time' } } }, param: 'tool_choice.function.name', message: 'tool_choice names function "get_time", which is not among the tools.' },
  { name: 'parallel_tool_calls without tools', extra: { parallel_tool_calls: false }, param: 'parallel_tool_calls', message: 'parallel_tool_calls is only allowed when tools are given.' },
];

describe('validateChatRequest: incompatible parameters (422)', () => {
  it.each(crossField)('$name → $param', ({ extra, param, message }) => {
    const err = errorOf(withFields(extra));
    expect({ status: err.status, code: err.code, param: err.param, type: err.type }).toEqual({
      status: 422,
      code: 'incompatible_parameters',
      param,
      type: 'invalid_request_error',
    });
    if (typeof message === 'string') expect(err.message).toBe(message);
    else expect(err.message).toMatch(message);
  });

  it('reports a shape error (400) before a cross-field conflict (422)', () => {
    const err = errorOf(withFields({ temperature: 5, stream_options: {} }));
    expect(err.status).toBe(400);
    expect(err.param).toBe('temperature');
  });
});
