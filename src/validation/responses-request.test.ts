import { describe, expect, it } from 'vitest';
import { chatRequestOfResponses, responsesParamOf, responsesTermsOf } from './responses-request.js';

describe('chatRequestOfResponses', () => {
  it('puts a continued conversation between the instructions and the input, one assistant message per turn', () => {
    const call = { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'weather', arguments: '{}', status: 'completed' };
    const text = (t: string) => ({ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: t, annotations: [] }] });
    const chat = chatRequestOfResponses({ model: 'm', instructions: 'Now.', input: [{ type: 'function_call_output', call_id: 'c1', output: 'Sunny' }] }, new Map(), [
      // An input that ends with an assistant turn the caller wrote, then the model's output: a
      // call, and text after it (some upstreams stream them in that order).
      [{ type: 'message', role: 'user', content: 'Weather?' }, { type: 'message', role: 'assistant', content: 'Let me see.' }],
      [call, text('One moment.')],
    ]);
    expect(chat.messages).toEqual([
      { role: 'system', content: 'Now.' },
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Let me see.' },
      { role: 'assistant', content: 'One moment.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'Sunny' },
    ]);
  });

  it('keeps text before and after a turn\'s calls in the calling message, so the results follow the calls', () => {
    const call = { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'weather', arguments: '{}', status: 'completed' };
    const text = (t: string) => ({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: t, annotations: [] }] });
    const chat = chatRequestOfResponses({ model: 'm', input: [{ type: 'message', role: 'user', content: 'Weather?' }, text('Let me check.'), call, text('Done checking.'), { type: 'function_call_output', call_id: 'c1', output: 'Sunny' }] }, new Map(), []);
    expect(chat.messages).toEqual([
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Let me check.\n\nDone checking.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'Sunny' },
    ]);
  });

  it('names previous_response_id for a kept item it cannot send again', () => {
    expect(() => chatRequestOfResponses({ model: 'm', input: 'x' }, new Map(), [[{ type: 'computer_call' }]])).toThrow(expect.objectContaining({ param: 'previous_response_id', code: 'invalid_parameter' }));
  });

  it('turns instructions, items, tools and formats into the chat request', () => {
    const chat = chatRequestOfResponses({
      model: 'm',
      instructions: 'Be brief.',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'Weather?' }, { type: 'input_image', image_url: 'https://x/y.png', detail: 'low' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{}' },
        { type: 'function_call', call_id: 'c2', name: 'time', arguments: '{}' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'function_call_output', call_id: 'c1', output: 'Sunny' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'Noon' }] },
      ],
      tools: [{ type: 'function', name: 'weather', parameters: { type: 'object' }, strict: true }],
      tool_choice: { type: 'function', name: 'weather' },
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
      max_output_tokens: 50,
      reasoning: { effort: 'low' },
      temperature: 0.2,
      store: true,
      stream: true,
    });
    expect(chat).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }] },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } },
            { id: 'c2', type: 'function', function: { name: 'time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'Sunny' },
        { role: 'tool', tool_call_id: 'c2', content: 'Noon' },
      ],
      tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'weather' } },
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
      max_completion_tokens: 50,
      reasoning_effort: 'low',
      temperature: 0.2,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('keeps metadata out of the chat request, and parallel_tool_calls without tools; top_logprobs turns logprobs on', () => {
    const chat = chatRequestOfResponses({ model: 'm', input: 'x', metadata: { team: 'a' }, parallel_tool_calls: false, top_logprobs: 2, prompt_cache_retention: '24h', moderation: null, context_management: [] });
    expect(chat).toEqual({ model: 'm', messages: [{ role: 'user', content: 'x' }], logprobs: true, top_logprobs: 2, prompt_cache_retention: '24h' });
    const withTools = chatRequestOfResponses({ model: 'm', input: 'x', tools: [{ type: 'function', name: 'f' }], parallel_tool_calls: false });
    expect(withTools.parallel_tool_calls).toBe(false);
    expect(chatRequestOfResponses({ model: 'm', input: 'x', parallel_tool_calls: null }).parallel_tool_calls).toBeUndefined();
  });

  it('takes a plain string input as one user message', () => {
    expect(chatRequestOfResponses({ model: 'm', input: 'Hi' }).messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it.each([
    [{ model: 'm', input: [] }, 'input'],
    [{ model: 'm', input: [{ role: 'tool', content: 'x' }] }, 'input[0].role'],
    [{ model: 'm', input: [{ type: 'function_call', call_id: 'c', name: 'f' }] }, 'input[0].arguments'],
    [{ model: 'm', input: 'x', tool_choice: { type: 'file_search' } }, 'tool_choice'],
    [{ model: 'm', input: 'x', text: { format: { type: 'json_schema', schema: {} } } }, 'text.format.name'],
    [{ model: 'm', input: 'x', background: true }, 'background'],
    [{ model: 'm', input: 'x', stream: 'yes' }, 'stream'],
  ])('refuses %j naming %s', (body, param) => {
    expect(() => chatRequestOfResponses(body)).toThrow(expect.objectContaining({ param }) as Error);
  });
});

describe('responsesTermsOf', () => {
  it('words the chat pipeline\'s messages in the Responses request\'s terms', () => {
    expect(responsesTermsOf('max_completion_tokens is too large: 5000.')).toBe('max_output_tokens is too large: 5000.');
    expect(responsesTermsOf('tools[0].function.name must be a-z.')).toBe('tools[0].name must be a-z.');
    expect(responsesTermsOf('response_format.json_schema.strict must be a boolean.')).toBe('text.format.strict must be a boolean.');
    expect(responsesTermsOf('Shorten the messages or lower max_completion_tokens.')).toBe('Shorten the input or lower max_output_tokens.');
  });
});

describe('responsesParamOf', () => {
  it('names the chat request\'s fields as the Responses API names them', () => {
    expect(responsesParamOf('max_completion_tokens')).toBe('max_output_tokens');
    expect(responsesParamOf('messages[2].content')).toBe('input');
    expect(responsesParamOf('tools[1].function.parameters')).toBe('tools[1].parameters');
    expect(responsesParamOf('response_format.json_schema.schema')).toBe('text.format');
    expect(responsesParamOf('temperature')).toBe('temperature');
    expect(responsesParamOf(null)).toBeNull();
  });
});
