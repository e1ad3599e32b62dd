import { describe, expect, it } from 'vitest';
import { ResponsesPresenter } from './responses-presenter.js';

const presenter = () => new ResponsesPresenter('req_0123456789abcdef0123456789abcdef', { max_output_tokens: 10 });
const frame = (chunk: unknown): string => `data: ${JSON.stringify(chunk)}\n\n`;
const chunk = (delta: unknown, finish: string | null = null, usage: unknown = null) => frame({ id: 'c', object: 'chat.completion.chunk', created: 1700000000, model: 'up', choices: [{ index: 0, delta, finish_reason: finish }], usage });

/** The events of a Responses stream: [type, data]. */
function events(text: string): Array<[string, Record<string, unknown>]> {
  return text
    .split('\n\n')
    .filter((e) => e !== '')
    .map((e) => {
      const [event, data] = e.split('\n');
      return [event!.slice(7), JSON.parse(data!.slice(6)) as Record<string, unknown>];
    });
}

/** What the pipeline counted, shown only when the upstream reported no usage. */
const COUNTED = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 };

describe('ResponsesPresenter.json', () => {
  it('shows text and tool calls as output items, and a completion cut by its cap as incomplete', () => {
    const completion = {
      id: 'c', object: 'chat.completion', created: 1700000000, model: 'up',
      choices: [{ index: 0, finish_reason: 'length', logprobs: null, message: { role: 'assistant', content: 'Partly', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] } }],
      usage: { prompt_tokens: 5, completion_tokens: 10, total_tokens: 15, prompt_tokens_details: { cached_tokens: 2 } },
    };
    const response = JSON.parse(presenter().json(JSON.stringify(completion), COUNTED)) as Record<string, unknown>;
    expect(response).toMatchObject({
      id: 'resp_0123456789abcdef0123456789abcdef', object: 'response', created_at: 1700000000, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, max_output_tokens: 10,
      output: [
        { type: 'message', id: 'msg_0123456789abcdef0123456789abcdef', status: 'completed', content: [{ type: 'output_text', text: 'Partly', annotations: [] }] },
        { type: 'function_call', id: 'fc_0123456789abcdef0123456789abcdef_0', call_id: 'call_1', name: 'f', arguments: '{"a":1}', status: 'incomplete' },
      ],
      usage: { input_tokens: 5, input_tokens_details: { cached_tokens: 2 }, output_tokens: 10, total_tokens: 15 },
    });
  });

  it('shows only the calls when the completion has no text', () => {
    const completion = { created: 1, model: 'up', choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] } }] };
    const response = JSON.parse(presenter().json(JSON.stringify(completion), COUNTED)) as { output: Array<{ type: string }>; status: string; usage: unknown };
    expect(response.output.map((o) => o.type)).toEqual(['function_call']);
    expect(response.status).toBe('completed');
    // The upstream reported no usage: the response shows what was counted, never null (the Vercel AI SDK requires it).
    expect(response.usage).toEqual({ input_tokens: 7, input_tokens_details: { cached_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 10 });
  });
});

describe('ResponsesStream', () => {
  it('opens the message on the first text, closes it when a tool call starts, and ends with the response', () => {
    const stream = presenter().stream();
    let out = stream.push(chunk({ role: 'assistant', content: '' }) + chunk({ content: 'Hi' }));
    out += stream.push(chunk({ tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'f', arguments: '' } }] }) + chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x"' } }] }));
    out += stream.push(chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, 'tool_calls') + frame({ id: 'c', created: 1700000000, model: 'up', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }));
    out += stream.push('data: [DONE]\n\n');
    const seen = events(out);
    expect(seen.map(([type]) => type)).toEqual([
      'response.created', 'response.in_progress',
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta',
      'response.function_call_arguments.done', 'response.output_item.done', 'response.completed',
    ]);
    expect(seen.map(([, data]) => data.sequence_number)).toEqual(seen.map((_, i) => i));
    const completed = seen.at(-1)![1].response as { output: unknown[]; usage: { total_tokens: number }; status: string };
    expect(completed.status).toBe('completed');
    expect(completed.output).toEqual([
      { type: 'message', id: 'msg_0123456789abcdef0123456789abcdef', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi', annotations: [] }] },
      { type: 'function_call', id: 'fc_0123456789abcdef0123456789abcdef_0', call_id: 'call_9', name: 'f', arguments: '{"x":1}', status: 'completed' },
    ]);
    expect(completed.usage.total_tokens).toBe(7);
  });

  it('ends a stream cut by its cap with response.incomplete', () => {
    const stream = presenter().stream();
    const seen = events(stream.push(chunk({ content: 'a' }, 'length') + 'data: [DONE]\n\n'));
    expect(seen.at(-1)![0]).toBe('response.incomplete');
    expect(seen.at(-1)![1]).toMatchObject({ response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [{ type: 'message', status: 'incomplete' }] } });
  });

  it('marks only the item the cap cut incomplete, streamed as whole', () => {
    const stream = presenter().stream();
    const out = stream.push(
      chunk({ content: 'Checking.' }) + chunk({ tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'f', arguments: '{"x"' } }] }, 'length') + 'data: [DONE]\n\n',
    );
    const completed = events(out).at(-1)![1].response as { output: Array<{ type: string; status: string }> };
    expect(completed.output.map((item) => [item.type, item.status])).toEqual([
      ['message', 'completed'],
      ['function_call', 'incomplete'],
    ]);
  });

  it('gives text that follows a tool call a message item of its own id', () => {
    const stream = presenter().stream();
    const out = stream.push(
      chunk({ content: 'Let me check.' }) +
        chunk({ tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'f', arguments: '{}' } }] }) +
        chunk({ content: 'Done checking.' }, 'stop') +
        'data: [DONE]\n\n',
    );
    const completed = events(out).at(-1)![1].response as { output: Array<{ type: string; id: string }> };
    expect(completed.output.map((item) => [item.type, item.id])).toEqual([
      ['message', 'msg_0123456789abcdef0123456789abcdef'],
      ['function_call', 'fc_0123456789abcdef0123456789abcdef_0'],
      ['message', 'msg_0123456789abcdef0123456789abcdef_1'],
    ]);
  });

  it("announces a call once its name came, from a later chunk if need be, with the arguments sent before it, and names it when done", () => {
    const stream = presenter().stream();
    const out = stream.push(
      chunk({ tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { arguments: '{"x"' } }] }) +
        chunk({ tool_calls: [{ index: 0, function: { name: 'lookup', arguments: ':1' } }] }) +
        chunk({ tool_calls: [{ index: 0, function: { arguments: '}' } }] }, 'tool_calls') +
        'data: [DONE]\n\n',
    );
    const seen = events(out).slice(2);
    expect(seen.map(([type]) => type)).toEqual([
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta',
      'response.function_call_arguments.done', 'response.output_item.done', 'response.completed',
    ]);
    expect(seen[0]![1].item).toMatchObject({ type: 'function_call', call_id: 'call_9', name: 'lookup', arguments: '' });
    expect(seen.slice(1, 3).map(([, data]) => data.delta)).toEqual(['{"x":1', '}']);
    expect(seen[3]![1]).toMatchObject({ name: 'lookup', arguments: '{"x":1}' });
  });

  it('announces calls in the order they started, when a later one is named first', () => {
    const stream = presenter().stream();
    const out = stream.push(
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { arguments: '' } }] }) +
        chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] }) +
        chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{}' } }] }, 'tool_calls') +
        'data: [DONE]\n\n',
    );
    const added = events(out).filter(([type]) => type === 'response.output_item.added').map(([, data]) => data.output_index);
    expect(added).toEqual([0, 1]);
  });

  it('turns an error frame into an error event carrying the envelope, and sends nothing after it', () => {
    const stream = presenter().stream();
    const error = { message: 'The upstream failed.', type: 'provider_error', param: null, code: 'upstream_error' };
    const seen = events(stream.push(chunk({ content: 'a' }) + `data: ${JSON.stringify({ error })}\n\n` + 'data: [DONE]\n\n'));
    expect(seen.at(-1)).toEqual(['error', { type: 'error', sequence_number: seen.length - 1, code: 'upstream_error', message: 'The upstream failed.', param: null, error }]);
  });

  it('takes odd chunks in its stride: an opening one of no choices, a choice with no delta, a frame that is not JSON', () => {
    const stream = presenter().stream();
    const opening = frame({ id: '', object: 'chat.completion.chunk', created: 0, model: '', choices: [], prompt_filter_results: [] });
    const filterOnly = frame({ id: 'c', created: 1700000000, model: 'up', choices: [{ index: 0, finish_reason: null, content_filter_results: {} }] });
    const out = stream.push(opening + filterOnly + 'data: {not json}\n\n' + chunk({ content: 'Hi' }, 'stop') + 'data: [DONE]\n\n');
    const seen = events(out);
    expect(seen[0]).toEqual(['response.created', expect.objectContaining({ response: expect.objectContaining({ created_at: 1700000000, model: 'up' }) })]);
    expect(seen.at(-1)![1]).toMatchObject({ response: { status: 'completed', output: [{ type: 'message', content: [{ text: 'Hi' }] }] } });
  });

  it('gives the same bytes when the whole stream is shown again (the Idempotency-Key record)', () => {
    const frames = [chunk({ content: 'One' }), chunk({ content: ' two' }, 'stop'), 'data: [DONE]\n\n'];
    const live = presenter().stream();
    const sent = frames.map((f) => live.push(f)).join('');
    expect(presenter().transcript(frames.join(''))).toBe(sent);
  });
});
