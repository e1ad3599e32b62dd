/**
 * Which client library sent a request, for key scopes that restrict SDKs. Read from headers the
 * libraries send on their own: the openai SDKs send `X-Stainless-Lang` and a `User-Agent` like
 * `OpenAI/JS 6.1.0`; LangChain keeps the Stainless headers but sends its own User-Agent; the
 * Vercel AI SDK appends `ai-sdk/...` to its User-Agent. Headers can be forged: a scope on SDKs
 * is a policy for well-behaved clients, not a security boundary (the key is).
 */
export const SDK_NAMES = ['openai-js', 'openai-python', 'openai', 'langchain', 'vercel-ai', 'curl', 'unknown'] as const;
export type SdkName = (typeof SDK_NAMES)[number];

export function detectSdk(userAgent: string | undefined, stainlessLang: string | undefined): SdkName {
  const ua = userAgent?.toLowerCase() ?? '';
  if (ua.includes('langchain')) return 'langchain';
  if (ua.includes('ai-sdk/') || ua.includes('vercel-ai')) return 'vercel-ai';
  if (ua.startsWith('openai/js') || (stainlessLang === 'js' && ua.startsWith('openai'))) return 'openai-js';
  if (ua.startsWith('openai/python') || stainlessLang === 'python') return 'openai-python';
  if (stainlessLang !== undefined) return stainlessLang === 'js' ? 'openai-js' : 'openai';
  if (ua.startsWith('curl/')) return 'curl';
  return 'unknown';
}
