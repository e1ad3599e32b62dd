import { describe, expect, it } from 'vitest';
import { detectSdk } from './sdk.js';

describe('detectSdk', () => {
  it.each([
    ['OpenAI/JS 6.2.0', 'js', 'openai-js'],
    ['OpenAI/Python 1.99.0', 'python', 'openai-python'],
    ['langchainjs-openai/1.0.0', 'js', 'langchain'],
    ['ai-sdk/openai-compatible/1.0.0 runtime/node', undefined, 'vercel-ai'],
    ['curl/8.5.0', undefined, 'curl'],
    ['Mozilla/5.0', undefined, 'unknown'],
    [undefined, undefined, 'unknown'],
  ])('%s (stainless %s) → %s', (ua, lang, sdk) => {
    expect(detectSdk(ua, lang)).toBe(sdk);
  });
});
