import { describe, it, expect } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import type { ChatCompletionRequest } from '../../protocol/chat.js';
import type { ChatCall } from '../types.js';
import { toMessagesRequest } from './request.js';
import { Cancellation } from '../../util/cancellation.js';

function makeCall(request: Partial<ChatCompletionRequest> = {}): ChatCall {
  return {
    request: { model: 'public-claude', messages: [{ role: 'user', content: 'Hi' }], ...request },
    upstreamModel: 'claude-upstream-1',
    signal: new Cancellation().signal,
    requestId: 'req_test_1',
    defaultMaxTokens: 1024,
  };
}

function translate(request: Partial<ChatCompletionRequest>, stream = false) {
  return toMessagesRequest(makeCall(request), stream);
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

describe('toMessagesRequest: basics', () => {
  it('uses the upstream model, the default output cap and text blocks', () => {
    expect(translate({})).toEqual({
      model: 'claude-upstream-1',
      max_tokens: 1024,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    });
  });

  it('asks for a stream only when streaming', () => {
    expect(translate({}, true).stream).toBe(true);
    expect('stream' in translate({ stream: true }, false)).toBe(false);
  });

  it('prefers max_completion_tokens, then max_tokens, then the default', () => {
    expect(translate({ max_completion_tokens: 10, max_tokens: 20 }).max_tokens).toBe(10);
    expect(translate({ max_tokens: 20 }).max_tokens).toBe(20);
    expect(translate({ max_tokens: null, max_completion_tokens: null }).max_tokens).toBe(1024);
  });

  it('passes temperature, stop sequences and the user id', () => {
    const body = translate({ temperature: 0.3, stop: 'END', user: 'user-42' });
    expect(body.temperature).toBe(0.3);
    expect(body.stop_sequences).toEqual(['END']);
    expect(body.metadata).toEqual({ user_id: 'user-42' });
    expect(translate({ stop: ['a', 'b'] }).stop_sequences).toEqual(['a', 'b']);
    expect(translate({ temperature: 0 }).temperature).toBe(0);
  });

  it('sends top_p alone, but only temperature when both are given (newer models refuse the two together)', () => {
    expect(translate({ top_p: 0.9 }).top_p).toBe(0.9);
    const both = translate({ temperature: 0.3, top_p: 0.9 });
    expect(both.temperature).toBe(0.3);
    expect(both.top_p).toBeUndefined();
  });

  it('drops empty stop sequences and refuses ones made only of whitespace, naming the entry', () => {
    expect(translate({ stop: ['', 'END'] }).stop_sequences).toEqual(['END']);
    expect(translate({ stop: '' }).stop_sequences).toBeUndefined();
    const one = thrown(() => translate({ stop: '\n' }));
    expect(one.code).toBe('incompatible_parameters');
    expect(one.param).toBe('stop');
    expect(thrown(() => translate({ stop: ['END', ' \n'] })).param).toBe('stop[1]');
  });

  it('ignores fields Anthropic has no use for', () => {
    const body = translate({ frequency_penalty: 0.5, presence_penalty: 0.1, seed: 7, logit_bias: { '1': 2 }, some_future_field: true, stream_options: { include_usage: true } });
    expect(Object.keys(body).sort()).toEqual(['max_tokens', 'messages', 'model']);
  });
});

describe('toMessagesRequest: refused parameters', () => {
  it('refuses temperature above 1, naming the parameter and the accepted range', () => {
    const err = thrown(() => translate({ temperature: 1.5 }));
    expect(err.code).toBe('incompatible_parameters');
    expect(err.status).toBe(422);
    expect(err.param).toBe('temperature');
    expect(err.message).toContain('0–1');
  });

  it('refuses n > 1 but accepts n = 1', () => {
    const err = thrown(() => translate({ n: 2 }));
    expect(err.code).toBe('incompatible_parameters');
    expect(err.param).toBe('n');
    expect(translate({ n: 1 }).messages).toHaveLength(1);
  });

  it('refuses JSON response formats and logprobs', () => {
    expect(thrown(() => translate({ response_format: { type: 'json_object' } })).param).toBe('response_format');
    expect(thrown(() => translate({ logprobs: true })).param).toBe('logprobs');
    expect(translate({ response_format: { type: 'text' }, logprobs: false }).model).toBe('claude-upstream-1');
  });

  it('refuses audio input', () => {
    const err = thrown(() =>
      translate({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }),
    );
    expect(err.code).toBe('incompatible_parameters');
    expect(err.param).toBe('messages[0].content[0]');
  });
});

describe('toMessagesRequest: conversation shape', () => {
  it('leaves out text that is only whitespace, which Anthropic refuses', () => {
    const body = translate({
      messages: [
        { role: 'user', content: [{ type: 'text', text: ' ' }, { type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: '\n' },
        { role: 'user', content: 'Again' },
        { role: 'assistant', content: '\n\n', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: ' ' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'text', text: 'Again' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'f', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1' }] },
    ]);
  });

  it('refuses a conversation with no message left to answer, naming messages', () => {
    for (const messages of [[{ role: 'system' as const, content: 'Be brief.' }], [{ role: 'user' as const, content: '  ' }]]) {
      const err = thrown(() => translate({ messages }));
      expect(err.code).toBe('incompatible_parameters');
      expect(err.param).toBe('messages');
    }
  });

  it('refuses a conversation whose last message, only whitespace, would leave the assistant\'s turn last', () => {
    const err = thrown(() => translate({ messages: [{ role: 'user', content: 'Tell a joke' }, { role: 'assistant', content: 'Why did the chicken' }, { role: 'user', content: '\n' }] }));
    expect([err.code, err.param]).toEqual(['incompatible_parameters', 'messages[2]']);
    // An assistant message the caller put last on purpose (a prefill) goes as it is.
    expect(translate({ messages: [{ role: 'user', content: 'Tell a joke' }, { role: 'assistant', content: 'Why did' }] }).messages).toHaveLength(2);
  });

  it('moves system and developer messages to the top-level system prompt', () => {
    const body = translate({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(body.system).toBe('Be brief.\n\nAnswer in French.');
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
  });

  it('merges consecutive messages of the same role', () => {
    const body = translate({
      messages: [
        { role: 'user', content: 'one' },
        { role: 'user', content: [{ type: 'text', text: 'two' }] },
        { role: 'assistant', content: 'three' },
        { role: 'assistant', content: 'four' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'three' }, { type: 'text', text: 'four' }] },
    ]);
  });

  it('turns assistant tool calls into tool_use blocks and tool messages into one user turn of tool_results', () => {
    const body = translate({
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18C' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '24C' }] },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Rome' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18C' },
          { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '24C' }] },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
  });

  it('puts tool results before text in a merged user turn', () => {
    const body = translate({
      messages: [
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'user', content: 'note' },
        { role: 'tool', tool_call_id: 'c', content: 'done' },
      ],
    });
    expect(body.messages[1]?.content.map((b) => b.type)).toEqual(['tool_result', 'text']);
  });

  it('keeps assistant text before its tool calls and treats empty arguments as no arguments', () => {
    const body = translate({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'c', type: 'function', function: { name: 'now', arguments: '' } }] },
      ],
    });
    expect(body.messages[1]?.content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'c', name: 'now', input: {} },
    ]);
  });

  it('rejects tool call arguments that are not a JSON object, naming the exact field', () => {
    const messages = (args: string): ChatCompletionRequest['messages'] => [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [
        { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
        { id: 'b', type: 'function', function: { name: 'f', arguments: args } },
      ] },
    ];
    // Deeper than the gateway can serialise again without running out of stack.
    const deep = `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    for (const bad of ['{not json', '[1,2]', '"text"', deep]) {
      const err = thrown(() => translate({ messages: messages(bad) }));
      expect(err.code).toBe('invalid_parameter');
      expect(err.param).toBe('messages[1].tool_calls[1].function.arguments');
    }
  });

  it('sends a tool call id used again in a later turn under a stand-in, and its results with it', () => {
    const call = (id: string, name: string) => ({ role: 'assistant' as const, content: null, tool_calls: [{ id, type: 'function' as const, function: { name, arguments: '{}' } }] });
    const messages: ChatCompletionRequest['messages'] = [
      { role: 'user', content: 'go' },
      call('call_0', 'f'),
      { role: 'tool', tool_call_id: 'call_0', content: 'first' },
      call('call_0', 'g'),
      { role: 'tool', tool_call_id: 'call_0', content: 'second' },
      { role: 'user', content: 'and?' },
    ];
    const idsOf = (body: ReturnType<typeof translate>) =>
      body.messages.flatMap((turn) => turn.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : block.type === 'tool_result' ? [block.tool_use_id] : [])));
    const ids = idsOf(translate({ messages }));
    expect(ids[0]).toBe('call_0');
    expect(ids[1]).toBe('call_0');
    expect(ids[2]).not.toBe('call_0');
    expect(ids[2]).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(ids[3]).toBe(ids[2]);
    // The same history always goes up under the same ids (a resend, the next turn).
    expect(idsOf(translate({ messages }))).toEqual(ids);
  });

  it('requires tool_call_id on tool messages', () => {
    const err = thrown(() => translate({ messages: [{ role: 'tool', content: 'x' }] }));
    expect(err.param).toBe('messages[0].tool_call_id');
  });
});

describe('toMessagesRequest: images', () => {
  it('maps data: URLs to base64 sources and http(s) URLs to url sources', () => {
    const body = translate({
      messages: [{
        role: 'user',
        content: [
          { type: 'text', text: 'Compare' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
        ],
      }],
    });
    expect(body.messages[0]?.content).toEqual([
      { type: 'text', text: 'Compare' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
  });

  it('refuses image types and URL schemes Anthropic cannot take', () => {
    const image = (url: string): Partial<ChatCompletionRequest> => ({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] });
    const tiff = thrown(() => translate(image('data:image/tiff;base64,AAAA')));
    expect(tiff.code).toBe('incompatible_parameters');
    expect(tiff.param).toBe('messages[0].content[0].image_url.url');
    expect(thrown(() => translate(image('ftp://example.com/a.png'))).code).toBe('invalid_parameter');
  });

  it('declares a picture under the type its bytes show, which Anthropic checks, and reads image/jpg as JPEG', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString('base64');
    const body = translate({
      messages: [{
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${png}` } },
          { type: 'image_url', image_url: { url: 'data:image/jpg;base64,AAAA' } },
        ],
      }],
    });
    expect(body.messages[0]?.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } },
    ]);
  });

  it('reads a percent-encoded data: URL as bytes, not as UTF-8 text', () => {
    const body = translate({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png,%89PNG%0d%0a%1A%0A' } }] }] });
    expect(body.messages[0]?.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString('base64') } },
    ]);
  });
});

describe('toMessagesRequest: tools', () => {
  const tools: ChatCompletionRequest['tools'] = [
    { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    { type: 'function', function: { name: 'now' } },
  ];

  it('maps function tools to name, description and input_schema', () => {
    expect(translate({ tools }).tools).toEqual([
      { name: 'get_weather', description: 'Weather by city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
      { name: 'now', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  it('gives a schema without a type the object type Anthropic requires, and leaves a typed one alone', () => {
    const body = translate({
      tools: [
        { type: 'function', function: { name: 'empty', parameters: {} } },
        { type: 'function', function: { name: 'untyped', parameters: { properties: { q: { type: 'string' } }, required: ['q'] } } },
      ],
    });
    expect(body.tools?.map((tool) => tool.input_schema)).toEqual([
      { type: 'object' },
      { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    ]);
    expect(translate({ tools }).tools?.[0]?.input_schema).toBe(tools[0]?.function.parameters);
  });

  it('maps tool_choice and parallel_tool_calls', () => {
    expect(translate({ tools }).tool_choice).toBeUndefined();
    expect(translate({ tools, tool_choice: 'auto' }).tool_choice).toEqual({ type: 'auto' });
    expect(translate({ tools, tool_choice: 'required' }).tool_choice).toEqual({ type: 'any' });
    expect(translate({ tools, tool_choice: 'none' }).tool_choice).toEqual({ type: 'none' });
    expect(translate({ tools, tool_choice: { type: 'function', function: { name: 'now' } } }).tool_choice).toEqual({ type: 'tool', name: 'now' });
    expect(translate({ tools, parallel_tool_calls: false }).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(translate({ tools, tool_choice: 'required', parallel_tool_calls: false }).tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    expect(translate({ tools, parallel_tool_calls: true }).tool_choice).toBeUndefined();
  });

  it('sends no tool_choice without tools', () => {
    const body = translate({ tool_choice: 'required', parallel_tool_calls: false });
    expect(body.tools).toBeUndefined();
    expect(body.tool_choice).toBeUndefined();
  });
});
