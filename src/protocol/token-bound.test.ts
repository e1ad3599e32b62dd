import { describe, expect, it } from 'vitest';
import { TOOLS_PROMPT_BOUND, chatTokenBound } from './token-bound.js';
import type { ChatCompletionRequest } from './chat.js';

const MODEL = { contextWindow: 128_000, maxOutputTokens: 4096, tokensPerImage: 2_500 };

describe('chatTokenBound', () => {
  it('bounds the prompt by the body size and the output by the cap times the choices', () => {
    const request: ChatCompletionRequest = { model: 'm', messages: [{ role: 'user', content: 'hello' }], max_tokens: 50, n: 3 };
    expect(chatTokenBound(request, 120, MODEL)).toEqual({ prompt: 120, output: 150, total: 270 });
  });

  it("uses the model's output cap when the request sets none", () => {
    const request: ChatCompletionRequest = { model: 'm', messages: [{ role: 'user', content: 'hello' }] };
    expect(chatTokenBound(request, 100, MODEL).output).toBe(4096);
    expect(chatTokenBound({ ...request, max_completion_tokens: 7 }, 100, MODEL).output).toBe(7);
  });

  it('adds what the body does not show: images and the instructions for tools', () => {
    const request: ChatCompletionRequest = {
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] }],
      tools: [{ type: 'function', function: { name: 'f' } }],
      max_tokens: 1,
    };
    expect(chatTokenBound(request, 200, MODEL).prompt).toBe(200 + 2_500 + TOOLS_PROMPT_BOUND);
    expect(chatTokenBound(request, 200, { ...MODEL, tokensPerImage: 30_000 }).prompt).toBe(200 + 30_000 + TOOLS_PROMPT_BOUND);
  });

  it('bounds a prompt with a file part, and every prompt, by the context window', () => {
    const withFile: ChatCompletionRequest = { model: 'm', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }], max_tokens: 10 };
    expect(chatTokenBound(withFile, 150, MODEL).prompt).toBe(128_000);
    const huge: ChatCompletionRequest = { model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 10 };
    expect(chatTokenBound(huge, 500_000, MODEL).prompt).toBe(128_000);
  });
});
