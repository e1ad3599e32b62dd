/**
 * Anthropic Message → OpenAI chat completion. The upstream body is untrusted input: every field
 * we rely on is checked, and anything off-shape becomes upstream_malformed_response rather than
 * a TypeError deep in the pipeline.
 */
import { GatewayError } from '../../errors/index.js';
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../protocol/chat.js';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function malformed(detail: string, cause?: unknown): GatewayError {
  return new GatewayError('upstream_malformed_response', `The upstream provider returned an unusable response: ${detail}.`, { cause });
}

/**
 * Anthropic has more stop reasons than OpenAI; each is mapped to the OpenAI reason a caller
 * should act on in the same way. An unknown (newer) reason is treated as a normal stop.
 */
export function toFinishReason(stopReason: unknown): FinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

/**
 * OpenAI's prompt_tokens counts every input token, cached or not; Anthropic reports the cache
 * reads and writes separately from input_tokens, so they are added back.
 */
export function toUsage(input: Record<string, unknown>, outputTokens: number): Usage {
  const cacheRead = count(input.cache_read_input_tokens);
  const prompt = count(input.input_tokens) + count(input.cache_creation_input_tokens) + cacheRead;
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: outputTokens, total_tokens: prompt + outputTokens };
  if (cacheRead > 0) usage.prompt_tokens_details = { cached_tokens: cacheRead };
  return usage;
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw malformed('the body is not JSON', err);
  }
}

/** `model` is what the upstream says served the request, like the OpenAI adapter relays it. */
export function toChatCompletion(bodyText: string, upstreamModel: string, created: number): ChatCompletion {
  const body = parseJson(bodyText);
  if (!isRecord(body)) throw malformed('the body is not a JSON object');
  if (typeof body.id !== 'string' || body.id === '') throw malformed('the message has no id');
  if (!Array.isArray(body.content)) throw malformed('the message has no content array');
  if (!isRecord(body.usage) || typeof body.usage.input_tokens !== 'number' || typeof body.usage.output_tokens !== 'number') throw malformed('the message has no usage');

  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of body.content as unknown[]) {
    if (!isRecord(block)) throw malformed('a content block is not an object');
    if (block.type === 'text') {
      if (typeof block.text !== 'string') throw malformed('a text block has no text');
      texts.push(block.text);
    } else if (block.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string') throw malformed('a tool_use block has no id or name');
      toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    }
    // Other block types (thinking, server tool results, ...) have no OpenAI counterpart and are left out.
  }

  const message: ChatCompletion['choices'][number]['message'] = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : null,
    refusal: null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;

  const usage = toUsage(body.usage, count(body.usage.output_tokens));
  return {
    id: body.id,
    object: 'chat.completion',
    created,
    model: typeof body.model === 'string' && body.model !== '' ? body.model : upstreamModel,
    choices: [{ index: 0, message, finish_reason: toFinishReason(body.stop_reason), logprobs: null }],
    usage,
  };
}
