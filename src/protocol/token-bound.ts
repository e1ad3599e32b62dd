/**
 * An upper bound of the tokens a chat request can use, for reserving tokens-per-minute room
 * before the upstream call. It must never be below what the provider later reports, or a key
 * could exceed its limit once its requests settle, and it must cost next to nothing.
 *
 * Prompt: every tokenizer in use (OpenAI's, Anthropic's, Gemini's, Llama's) is byte-level or has a
 * byte fallback, so a token covers at least one byte, and the request body holds every byte of the
 * prompt plus the JSON around it (which outweighs the few framing tokens a chat template adds per
 * message). What a body does not show is added: an allowance per image sent by URL (the model's
 * `tokens_per_image`), and one for the hidden instructions providers add when tools are offered.
 * A file part may hold any number of pages, so a request with one is bounded by the model's
 * context window alone, which also caps every prompt (a provider refuses a longer one). Output:
 * the request's own cap, or the model's (which the adapters send upstream when the caller gives
 * none), times the number of choices.
 */
import type { ChatCompletionRequest } from './chat.js';

/** Above the system prompt Anthropic adds for tool use (a few hundred tokens). */
export const TOOLS_PROMPT_BOUND = 1_000;

export interface TokenBound {
  readonly prompt: number;
  readonly output: number;
  readonly total: number;
}

/** What the bound needs to know of the model. */
export interface ModelTokenFacts {
  readonly contextWindow: number;
  readonly maxOutputTokens: number;
  readonly tokensPerImage: number;
}

export function chatTokenBound(request: ChatCompletionRequest, bodyBytes: number, model: ModelTokenFacts): TokenBound {
  let prompt = bodyBytes;
  for (const message of request.messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (part.type === 'image_url') prompt += model.tokensPerImage;
      else if (part.type === 'file') prompt += model.contextWindow;
    }
  }
  if (request.tools !== undefined && request.tools.length > 0) prompt += TOOLS_PROMPT_BOUND;
  prompt = Math.min(prompt, model.contextWindow);
  const output = (request.max_completion_tokens ?? request.max_tokens ?? model.maxOutputTokens) * (request.n ?? 1);
  return { prompt, output, total: prompt + output };
}
