import { describe, it, expect } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import { toChatCompletion, toFinishReason, toUsage, type ResponseContext } from './response.js';
import { thoughtSignatureOf } from './tool-call-id.js';

const CTX: ResponseContext = { providerId: 'gemini-test', apiKey: 'AIza-secret', upstreamModel: 'gemini-2.5-flash', created: 1_700_000_000 };

function answer(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    candidates: [{ content: { parts: [{ text: 'Hello' }], role: 'model' }, finishReason: 'STOP' }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'gemini-2.5-flash-001',
    responseId: 'resp123',
    ...overrides,
  });
}

function candidate(parts: unknown[], finishReason = 'STOP', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { content: { parts, role: 'model' }, finishReason, ...extra };
}

function rejection(body: string): GatewayError {
  try {
    toChatCompletion(body, CTX);
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected a GatewayError');
}

describe('toChatCompletion', () => {
  it('builds an OpenAI completion named after the configured upstream model', () => {
    expect(toChatCompletion(answer(), CTX)).toEqual({
      id: 'chatcmpl-resp123',
      object: 'chat.completion',
      created: CTX.created,
      model: 'gemini-2.5-flash',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello', refusal: null }, finish_reason: 'stop', logprobs: null }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
  });

  it('makes up a unique id when Gemini names none', () => {
    const a = toChatCompletion(answer({ responseId: undefined }), CTX).id;
    const b = toChatCompletion(answer({ responseId: undefined }), CTX).id;
    expect(a).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    expect(a).not.toBe(b);
  });

  it('joins text parts, leaves out thoughts and turns function calls into tool calls with made-up ids', () => {
    const completion = toChatCompletion(
      answer({
        candidates: [
          candidate([
            { text: 'Considering the weather tool.', thought: true },
            { text: 'Let me ' },
            { text: 'check.' },
            { functionCall: { name: 'get_weather', args: { city: 'Paris', days: [1, 2] } }, thoughtSignature: '+/+/AQ==' },
            { functionCall: { name: 'now' } },
          ]),
        ],
      }),
      CTX,
    );
    const choice = completion.choices[0]!;
    expect(choice.message.content).toBe('Let me check.');
    expect(choice.finish_reason).toBe('tool_calls');
    const [weather, now] = choice.message.tool_calls!;
    expect(weather).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","days":[1,2]}' } });
    expect(now).toMatchObject({ type: 'function', function: { name: 'now', arguments: '{}' } });
    expect(weather!.id).toMatch(/^call_[0-9a-f]{24}_ts_/);
    expect(thoughtSignatureOf(weather!.id)).toBe('+/+/AQ==');
    expect(now!.id).toMatch(/^call_[0-9a-f]{24}$/);
  });

  it('gives null content and no tool_calls when there is neither', () => {
    const choice = toChatCompletion(answer({ candidates: [{ finishReason: 'SAFETY' }] }), CTX).choices[0]!;
    expect(choice.message.content).toBeNull();
    expect('tool_calls' in choice.message).toBe(false);
    expect(choice.finish_reason).toBe('content_filter');
  });

  it.each(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS'])('fails an answer that ended in %s without a call (502 upstream_generation_failed), not an empty stop', (reason) => {
    for (const parts of [[], [{ text: 'Let me call' }]]) {
      const err = rejection(answer({ candidates: [candidate(parts, reason)] }));
      expect([err.status, err.code]).toEqual([502, 'upstream_generation_failed']);
      expect(err.message).toContain(reason);
    }
    // A call that did come is relayed as the call it is.
    expect(toChatCompletion(answer({ candidates: [candidate([{ functionCall: { name: 'f', args: {} } }], reason)] }), CTX).choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('returns one choice per candidate, in index order, a missing index being 0', () => {
    const completion = toChatCompletion(answer({ candidates: [candidate([{ text: 'B' }], 'MAX_TOKENS', { index: 1 }), candidate([{ text: 'A' }])] }), CTX);
    expect(completion.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, 'A', 'stop'],
      [1, 'B', 'length'],
    ]);
  });

  it('answers a blocked prompt with one filtered, empty choice', () => {
    const completion = toChatCompletion(answer({ candidates: undefined, promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } }), CTX);
    expect(completion.choices).toEqual([{ index: 0, message: { role: 'assistant', content: null, refusal: null }, finish_reason: 'content_filter', logprobs: null }]);
    expect(completion.usage).toEqual({ prompt_tokens: 9, completion_tokens: 0, total_tokens: 9 });
  });

  it('leaves usage out when Gemini reports none', () => {
    expect('usage' in toChatCompletion(answer({ usageMetadata: undefined }), CTX)).toBe(false);
  });

  it('reports an error body inside a 200 as the error it is, without the key', () => {
    const err = rejection(JSON.stringify({ error: { code: 503, message: `overloaded for ${CTX.apiKey}`, status: 'UNAVAILABLE' } }));
    expect(err.code).toBe('upstream_unavailable');
    expect(err.message).not.toContain(CTX.apiKey);
  });

  it.each([
    ['not json', 'Internal Server Error'],
    ['a JSON array', '[]'],
    ['no candidates and no block reason', answer({ candidates: [] })],
    ['candidates that are not an array', answer({ candidates: {} })],
    ['a candidate that is not an object', answer({ candidates: ['x'] })],
    ['content that is not an object', answer({ candidates: [{ content: 'x' }] })],
    ['parts that are not an array', answer({ candidates: [{ content: { parts: 'x' } }] })],
    ['a text part whose text is a number', answer({ candidates: [candidate([{ text: 1 }])] })],
    ['a function call without a name', answer({ candidates: [candidate([{ functionCall: { args: {} } }])] })],
    ['function call args that are an array', answer({ candidates: [candidate([{ functionCall: { name: 'f', args: [1] } }])] })],
    ['two candidates with one index', answer({ candidates: [candidate([{ text: 'a' }]), candidate([{ text: 'b' }], 'STOP', { index: 0 })] })],
    ['a negative index', answer({ candidates: [candidate([{ text: 'a' }], 'STOP', { index: -1 })] })],
  ])('rejects %s as a malformed upstream response', (_label, body) => {
    const err = rejection(body);
    expect(err.code).toBe('upstream_malformed_response');
    expect(err.status).toBe(502);
  });
});

describe('toFinishReason', () => {
  it.each([
    ['STOP', false, 'stop'],
    ['STOP', true, 'tool_calls'],
    [undefined, true, 'tool_calls'],
    ['MAX_TOKENS', false, 'length'],
    ['MAX_TOKENS', true, 'length'],
    ['SAFETY', false, 'content_filter'],
    ['RECITATION', false, 'content_filter'],
    ['BLOCKLIST', false, 'content_filter'],
    ['PROHIBITED_CONTENT', false, 'content_filter'],
    ['SPII', false, 'content_filter'],
    ['IMAGE_SAFETY', false, 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', false, 'stop'],
    ['OTHER', false, 'stop'],
    ['SOMETHING_NEW', false, 'stop'],
  ])('maps %s (tool calls: %s) to %s', (reason, calls, finish) => {
    expect(toFinishReason(reason, calls)).toBe(finish);
  });
});

describe('toUsage', () => {
  it('counts thinking tokens as completion tokens and reports cached prompt tokens', () => {
    expect(toUsage({ promptTokenCount: 17, candidatesTokenCount: 6, thoughtsTokenCount: 5, cachedContentTokenCount: 4, totalTokenCount: 28 })).toEqual({
      prompt_tokens: 17,
      completion_tokens: 11,
      total_tokens: 28,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 5 },
    });
  });

  it('counts tool-use prompt tokens as prompt tokens', () => {
    expect(toUsage({ promptTokenCount: 10, toolUsePromptTokenCount: 3, candidatesTokenCount: 2 })).toEqual({ prompt_tokens: 13, completion_tokens: 2, total_tokens: 15 });
  });

  it('is null for metadata without counts', () => {
    expect(toUsage(undefined)).toBeNull();
    expect(toUsage({ trafficType: 'ON_DEMAND' })).toBeNull();
    expect(toUsage({ totalTokenCount: 0 })).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });
});
