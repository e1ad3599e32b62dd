/**
 * Validation of a chat-completions request body, on the hot path of every request: one compiled Ajv
 * validator for shapes and ranges (chat-schema.ts), then a few cross-field rules in plain code.
 *
 * - Shape/range errors: 400 `invalid_parameter`, or `missing_required_parameter`.
 * - Valid values that conflict (OpenAI's rules): 422 `incompatible_parameters`.
 * `param` names the field as the caller wrote it: `messages[0].role`, `tools[2].function.name`.
 *
 * The body is returned as it came, not copied: unknown fields stay and are relayed upstream.
 */
import type { ChatCompletionRequest } from '../protocol/chat.js';
import { GatewayError } from '../errors/index.js';
import { ajv } from './ajv.js';
import { ajvErrorToGatewayError, typeName } from './ajv-errors.js';
import { ChatRequestSchema, type ValidChatRequest } from './chat-schema.js';

const validateShape = ajv.compile<ValidChatRequest>(ChatRequestSchema);

export function validateChatRequest(body: unknown): ChatCompletionRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatewayError('invalid_parameter', `The request body must be a JSON object, got ${typeName(body)}.`, { param: null });
  }
  if (!validateShape(body)) throw ajvErrorToGatewayError(validateShape, body);
  checkAssistantContent(body);
  checkCrossField(body);
  return body;
}

/** An assistant message may omit `content` (or send null) only when it carries `tool_calls`. */
function checkAssistantContent(req: ValidChatRequest): void {
  const { messages } = req;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== 'assistant' || m.tool_calls !== undefined) continue;
    if (m.content === undefined) {
      throw new GatewayError(
        'missing_required_parameter',
        `Missing required parameter: 'messages[${i}].content' (an assistant message needs content unless it has tool_calls).`,
        { param: `messages[${i}].content` },
      );
    }
    if (m.content === null) {
      throw new GatewayError(
        'invalid_parameter',
        `messages[${i}].content may be null only in an assistant message with tool_calls; send a string or an array of content parts.`,
        { param: `messages[${i}].content` },
      );
    }
  }
}

function incompatible(param: string, message: string): GatewayError {
  return new GatewayError('incompatible_parameters', message, { param });
}

/** OpenAI's cross-field rules. `null` counts as not set, as it does for OpenAI. */
function checkCrossField(req: ValidChatRequest): void {
  if (req.stream_options != null && req.stream !== true) {
    throw incompatible('stream_options', 'stream_options is only allowed when stream is true.');
  }
  if (req.max_tokens != null && req.max_completion_tokens != null && req.max_tokens !== req.max_completion_tokens) {
    throw incompatible(
      'max_tokens',
      `max_tokens (${req.max_tokens}) and max_completion_tokens (${req.max_completion_tokens}) are both set, to different values; ` +
        'send only max_completion_tokens (max_tokens is its deprecated name).',
    );
  }
  if (req.top_logprobs != null && req.logprobs !== true) {
    throw incompatible('top_logprobs', 'top_logprobs is only allowed when logprobs is true.');
  }

  // An empty tools array counts as no tools.
  const tools = req.tools;
  const hasTools = tools !== undefined && tools.length > 0;
  const choice = req.tool_choice;
  if (choice !== undefined && choice !== 'none' && choice !== 'auto') {
    if (!hasTools) {
      const shown = typeof choice === 'string' ? `"${choice}"` : `naming function "${choice.function.name}"`;
      throw incompatible('tool_choice', `tool_choice ${shown} requires tools, but no tools were given.`);
    }
    if (typeof choice === 'object') {
      const name = choice.function.name;
      if (!tools.some((t) => t.function.name === name)) {
        throw incompatible('tool_choice.function.name', `tool_choice names function "${name}", which is not among the tools.`);
      }
    }
  }
  if (req.parallel_tool_calls !== undefined && !hasTools) {
    throw incompatible('parallel_tool_calls', 'parallel_tool_calls is only allowed when tools are given.');
  }
}
