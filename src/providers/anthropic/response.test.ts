import { describe, it, expect } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import { toChatCompletion, toFinishReason } from './response.js';

const CREATED = 1_700_000_000;

function message(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: 'msg_01ABC',
    type: 'message',
    role: 'assistant',
    model: 'claude-upstream-1',
    content: [{ type: 'text', text: 'Hello' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
    ...overrides,
  });
}

describe('toChatCompletion', () => {
  it('builds an OpenAI completion named after the model the upstream reports', () => {
    expect(toChatCompletion(message(), 'fallback-name', CREATED)).toEqual({
      id: 'msg_01ABC',
      object: 'chat.completion',
      created: CREATED,
      model: 'claude-upstream-1',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello', refusal: null }, finish_reason: 'stop', logprobs: null }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
  });

  it('joins text blocks and turns tool_use blocks into tool calls', () => {
    const completion = toChatCompletion(
      message({
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'text', text: 'Let me ' },
          { type: 'text', text: 'check.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } },
        ],
        stop_reason: 'tool_use',
      }),
      'public-claude',
      CREATED,
    );
    const choice = completion.choices[0]!;
    expect(choice.message.content).toBe('Let me check.');
    expect(choice.message.tool_calls).toEqual([
      { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","days":[1,2]}' } },
    ]);
    expect(choice.finish_reason).toBe('tool_calls');
  });

  it('gives null content and no tool_calls when there is neither', () => {
    const choice = toChatCompletion(message({ content: [] }), 'm', CREATED).choices[0]!;
    expect(choice.message.content).toBeNull();
    expect('tool_calls' in choice.message).toBe(false);
  });

  it('counts cache reads and writes as prompt tokens', () => {
    const usage = toChatCompletion(
      message({ usage: { input_tokens: 21, cache_creation_input_tokens: 4, cache_read_input_tokens: 8, output_tokens: 6 } }),
      'm',
      CREATED,
    ).usage;
    expect(usage).toEqual({ prompt_tokens: 33, completion_tokens: 6, total_tokens: 39, prompt_tokens_details: { cached_tokens: 8 } });
  });

  it.each([
    ['not json', 'Internal Server Error'],
    ['a JSON array', '[]'],
    ['no content', message({ content: undefined })],
    ['no usage', message({ usage: undefined })],
    ['usage without numbers', message({ usage: { input_tokens: '1', output_tokens: 2 } })],
    ['no id', message({ id: undefined })],
    ['a text block without text', message({ content: [{ type: 'text' }] })],
    ['a tool_use block without a name', message({ content: [{ type: 'tool_use', id: 't', input: {} }] })],
  ])('rejects %s as a malformed upstream response', (_label, body) => {
    let error: unknown;
    try {
      toChatCompletion(body, 'm', CREATED);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('upstream_malformed_response');
    expect((error as GatewayError).status).toBe(502);
  });
});

describe('toFinishReason', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    [null, 'stop'],
    ['something_new', 'stop'],
  ])('maps %s to %s', (stop, finish) => {
    expect(toFinishReason(stop)).toBe(finish);
  });
});
