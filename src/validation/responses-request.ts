/**
 * A Responses API request (`POST /v1/responses`) turned into the chat completion request the
 * pipeline serves, checking what the chat validator cannot name in the caller's terms (`input`,
 * `instructions`, `text.format`, `tools[0].name`). Items of earlier responses named by
 * `item_reference`, and the conversation `previous_response_id` continues, are looked up first
 * (src/responses/stored-responses.ts) and handed in. What needs state Tollgate does not keep
 * (`conversation`, stored prompts) and hosted tools (web search, file search…) are refused with
 * 400 naming the field; `include`, `truncation` and `background: false` are accepted and have no
 * effect.
 */
import { GatewayError } from '../errors/index.js';
import type { ChatCompletionRequest, ChatMessage, ContentPart, FunctionTool, ResponseFormat, ToolCall, ToolChoice } from '../protocol/chat.js';
import type { ResponseOutputItem } from '../protocol/responses.js';

/** Fields passed to the chat request under the same name. */
const SAME_NAME = ['model', 'temperature', 'top_p', 'user', 'service_tier', 'prompt_cache_key', 'prompt_cache_retention', 'safety_identifier'] as const;
/**
 * Fields accepted and left out: they concern storage or server features that do not apply here.
 * `metadata` is echoed in the response but not sent on: OpenAI's chat completions take it only
 * with `store`.
 */
const IGNORED = new Set(['store', 'include', 'truncation', 'stream_options', 'metadata', 'context_management', 'moderation', 'prompt_cache_options']);
/** Fields that need state or features Tollgate does not have. */
const UNSUPPORTED: Record<string, string> = {
  conversation: 'Tollgate keeps no conversations: send the whole conversation in input.',
  prompt: 'Stored prompts are not supported: send instructions and input.',
};
const KNOWN = new Set<string>([...SAME_NAME, ...IGNORED, ...Object.keys(UNSUPPORTED), 'input', 'instructions', 'previous_response_id', 'max_output_tokens', 'tools', 'tool_choice', 'text', 'reasoning', 'stream', 'background', 'max_tool_calls', 'parallel_tool_calls', 'top_logprobs']);

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_parameter', message, { param });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The ids of the items the request's input names by reference, to look up before translating it. */
export function itemReferenceIds(body: unknown): string[] {
  const input = isObject(body) ? body.input : undefined;
  if (!Array.isArray(input)) return [];
  return input.flatMap((item: unknown) => (isObject(item) && item.type === 'item_reference' && typeof item.id === 'string' ? [item.id] : []));
}

/** The response the request continues, if it names one; checked for type only (the store says whether it is kept). */
export function previousResponseIdOf(body: unknown): string | null {
  const id = isObject(body) ? body.previous_response_id : undefined;
  if (id == null) return null;
  if (typeof id !== 'string' || id === '') throw invalid('previous_response_id', 'previous_response_id must be the id of an earlier response (resp_…).');
  return id;
}

/**
 * The request's input as the items a later request continuing it will be sent again: a string is
 * a user message, and references are replaced by the items they name. Called once the request has
 * been translated, so everything in it is known to be valid.
 */
export function inputItemsOf(body: unknown, referenced: ReadonlyMap<string, ResponseOutputItem> = new Map()): unknown[] {
  const input = isObject(body) ? body.input : undefined;
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  if (!Array.isArray(input)) return [];
  return input.map((item: unknown, i) => (isObject(item) && item.type === 'item_reference' ? referencedItem(item, referenced, `input[${i}]`) : item));
}

/**
 * `history`: the items of the conversation the request continues (previous_response_id), oldest
 * first, in runs (each response's input, then its output), sent before its input.
 */
export function chatRequestOfResponses(body: unknown, referenced: ReadonlyMap<string, ResponseOutputItem> = new Map(), history: readonly (readonly unknown[])[] = []): ChatCompletionRequest {
  if (!isObject(body)) throw new GatewayError('invalid_parameter', 'The request body must be a JSON object.', { param: null });
  for (const name of Object.keys(body)) {
    if (!KNOWN.has(name)) throw invalid(name, `Unknown parameter: ${name}.`);
    if (UNSUPPORTED[name] !== undefined && body[name] != null) throw invalid(name, `${name} is not supported. ${UNSUPPORTED[name]}`);
  }
  if (body.model === undefined) throw new GatewayError('missing_required_parameter', 'model is required.', { param: 'model' });
  if (body.input === undefined) throw new GatewayError('missing_required_parameter', 'input is required.', { param: 'input' });
  // Only `false` keeps a response from being kept: "false" or 0 must not keep it silently.
  if (body.store != null && typeof body.store !== 'boolean') throw invalid('store', 'store must be a boolean.');
  if (body.background === true) throw invalid('background', 'background responses are not supported: Tollgate keeps no responses to poll.');
  if (body.max_tool_calls != null) throw invalid('max_tool_calls', 'max_tool_calls is not supported: the tools are your own functions, called by you.');

  const messages = instructionsOf(body.instructions);
  if (history.length > 0) addHistory(messages, history);
  addMessages(messages, body.input, referenced);
  const request: ChatCompletionRequest = { model: body.model as string, messages };
  const fields = request as Record<string, unknown>;
  for (const name of SAME_NAME) if (body[name] !== undefined && name !== 'model') fields[name] = body[name];
  if (body.max_output_tokens != null) request.max_completion_tokens = body.max_output_tokens as number;
  if (body.tools != null) request.tools = toolsOf(body.tools);
  // Echoed on every response; chat completions take it only beside tools.
  if (typeof body.parallel_tool_calls === 'boolean' && request.tools !== undefined && request.tools.length > 0) request.parallel_tool_calls = body.parallel_tool_calls;
  // The Responses API has no logprobs switch: asking for top log probabilities is the switch.
  if (body.top_logprobs != null) {
    request.logprobs = true;
    request.top_logprobs = body.top_logprobs as number;
  }
  if (body.tool_choice != null) request.tool_choice = toolChoiceOf(body.tool_choice);
  const format = formatOf(body.text);
  if (format !== undefined) request.response_format = format;
  const effort = reasoningEffortOf(body.reasoning);
  if (effort !== undefined) request.reasoning_effort = effort;
  if (body.stream != null) {
    if (typeof body.stream !== 'boolean') throw invalid('stream', 'stream must be a boolean.');
    request.stream = body.stream;
    // The stream ends with the response's usage: the chat stream must carry it.
    if (body.stream) request.stream_options = { include_usage: true };
  }
  return request;
}

function instructionsOf(instructions: unknown): ChatMessage[] {
  if (instructions == null) return [];
  if (typeof instructions !== 'string') throw invalid('instructions', 'instructions must be a string.');
  return instructions === '' ? [] : [{ role: 'system', content: instructions }];
}

/**
 * The kept conversation's items, as messages. They were checked when first sent; one that cannot be
 * sent again (an item kept by a version that took what this one refuses) names the conversation.
 */
function addHistory(messages: ChatMessage[], history: readonly (readonly unknown[])[]): void {
  try {
    for (const run of history) addMessages(messages, run, new Map(), 'previous_response_id');
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    throw invalid('previous_response_id', `The conversation of previous_response_id holds an item that cannot be sent again (${err.message}); send the whole conversation in input.`);
  }
}

/**
 * Appends one run of items (a request's input, or an earlier response's input or output) as chat
 * messages. Within the run, the text and the function calls of one assistant turn go in one
 * assistant message, in whichever order they came, as chat completions want the tool results
 * straight after the message that called the tools; a run never adds to a message of the run
 * before it, which was the other side's turn.
 */
function addMessages(messages: ChatMessage[], input: unknown, referenced: ReadonlyMap<string, ResponseOutputItem>, name = 'input'): void {
  const runStart = messages.length;
  const lastAssistant = (): ChatMessage | undefined => {
    const last = messages.length > runStart ? messages[messages.length - 1] : undefined;
    return last?.role === 'assistant' ? last : undefined;
  };
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: input });
    return;
  }
  if (!Array.isArray(input) || input.length === 0) throw invalid(name, `${name} must be a string or a non-empty array of input items.`);
  input.forEach((given: unknown, i) => {
    const param = `${name}[${i}]`;
    if (!isObject(given)) throw invalid(param, `${param} must be an object.`);
    const item = given.type === 'item_reference' ? referencedItem(given, referenced, param) : given;
    const type = item.type ?? 'message';
    if (type === 'message') {
      const message = messageOf(item, param);
      const calling = lastAssistant();
      // Text that came after the turn's calls joins them: a message between the calls and their
      // results would be refused (chat completions want the results straight after the calls).
      if (message.role === 'assistant' && calling?.tool_calls !== undefined && typeof message.content === 'string' && (calling.content == null || typeof calling.content === 'string')) {
        calling.content = calling.content == null || calling.content === '' ? message.content : `${calling.content}\n\n${message.content}`;
      } else messages.push(message);
    } else if (type === 'function_call') {
      const call = functionCallOf(item, param);
      const last = lastAssistant();
      if (last !== undefined) (last.tool_calls ??= []).push(call);
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string' || item.call_id === '') throw invalid(`${param}.call_id`, `${param}.call_id must be a non-empty string.`);
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: outputTextOf(item.output, `${param}.output`) });
    } else if (type === 'reasoning') {
      // A reasoning item handed back from an earlier response: chat completions have no place for it.
    } else {
      throw invalid(`${param}.type`, `${param}.type ${JSON.stringify(type)} is not supported (message, function_call, function_call_output).`);
    }
  });
}

/** An earlier response's output item, as the input item it stands for. */
function referencedItem(reference: Record<string, unknown>, referenced: ReadonlyMap<string, ResponseOutputItem>, param: string): Record<string, unknown> {
  const id = reference.id;
  if (typeof id !== 'string' || id === '') throw invalid(`${param}.id`, `${param}.id must be the id of an output item.`);
  const item = referenced.get(id);
  if (item === undefined) {
    throw invalid(`${param}.id`, `${param}.id: no item "${id.slice(0, 80)}" is kept for this account (responses are kept for responses.retention_ms, and not at all when sent with store: false). Send the item itself.`);
  }
  return item.type === 'message' ? { type: 'message', role: 'assistant', content: item.content } : { ...item };
}

function messageOf(item: Record<string, unknown>, param: string): ChatMessage {
  const role = item.role;
  if (role !== 'user' && role !== 'system' && role !== 'developer' && role !== 'assistant') {
    throw invalid(`${param}.role`, `${param}.role must be one of user, system, developer, assistant.`);
  }
  const content = item.content;
  if (typeof content === 'string') return { role, content };
  if (!Array.isArray(content)) throw invalid(`${param}.content`, `${param}.content must be a string or an array of content parts.`);
  if (role === 'assistant') {
    // Earlier output handed back: its text, as chat completions take an assistant turn.
    const text = content.map((part: unknown, j) => {
      const p = isObject(part) ? part : {};
      if ((p.type === 'output_text' || p.type === 'input_text') && typeof p.text === 'string') return p.text;
      if (p.type === 'refusal' && typeof p.refusal === 'string') return p.refusal;
      throw invalid(`${param}.content[${j}]`, `${param}.content[${j}] of an assistant message must be output_text or refusal.`);
    });
    return { role, content: text.join('') };
  }
  return { role, content: content.map((part: unknown, j) => partOf(part, `${param}.content[${j}]`)) };
}

function partOf(part: unknown, param: string): ContentPart {
  if (!isObject(part)) throw invalid(param, `${param} must be an object.`);
  if (part.type === 'input_text') {
    if (typeof part.text !== 'string') throw invalid(`${param}.text`, `${param}.text must be a string.`);
    return { type: 'text', text: part.text };
  }
  if (part.type === 'input_image') {
    if (typeof part.image_url !== 'string' || part.image_url === '') {
      throw invalid(`${param}.image_url`, `${param}.image_url must be an http(s) or data: URL; images by file_id are not supported.`);
    }
    const detail = part.detail;
    if (detail != null && detail !== 'auto' && detail !== 'low' && detail !== 'high') throw invalid(`${param}.detail`, `${param}.detail must be auto, low or high.`);
    return { type: 'image_url', image_url: detail == null ? { url: part.image_url } : { url: part.image_url, detail } };
  }
  if (part.type === 'input_file') {
    if (typeof part.file_data !== 'string') throw invalid(param, `${param}: only files sent inline (file_data) are supported.`);
    return { type: 'file', file: { file_data: part.file_data, ...(typeof part.filename === 'string' ? { filename: part.filename } : {}) } };
  }
  throw invalid(`${param}.type`, `${param}.type must be input_text, input_image or input_file.`);
}

function functionCallOf(item: Record<string, unknown>, param: string): ToolCall {
  if (typeof item.call_id !== 'string' || item.call_id === '') throw invalid(`${param}.call_id`, `${param}.call_id must be a non-empty string.`);
  if (typeof item.name !== 'string' || item.name === '') throw invalid(`${param}.name`, `${param}.name must be a non-empty string.`);
  if (typeof item.arguments !== 'string') throw invalid(`${param}.arguments`, `${param}.arguments must be a string (JSON).`);
  return { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
}

function outputTextOf(output: unknown, param: string): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    return output
      .map((part: unknown, j) => {
        if (isObject(part) && part.type === 'input_text' && typeof part.text === 'string') return part.text;
        throw invalid(`${param}[${j}]`, `${param}[${j}] must be an input_text part.`);
      })
      .join('');
  }
  throw invalid(param, `${param} must be a string.`);
}

function toolsOf(tools: unknown): FunctionTool[] {
  if (!Array.isArray(tools)) throw invalid('tools', 'tools must be an array.');
  return tools.map((tool: unknown, i) => {
    const param = `tools[${i}]`;
    if (!isObject(tool)) throw invalid(param, `${param} must be an object.`);
    if (tool.type !== 'function') throw invalid(`${param}.type`, `${param}.type "${String(tool.type)}" is not supported: only function tools (hosted tools run on OpenAI's side).`);
    if (typeof tool.name !== 'string' || tool.name === '') throw invalid(`${param}.name`, `${param}.name must be a non-empty string.`);
    const fn: FunctionTool['function'] = { name: tool.name };
    if (tool.description != null) fn.description = tool.description as string;
    if (tool.parameters != null) fn.parameters = tool.parameters as Record<string, unknown>;
    if (tool.strict != null) fn.strict = tool.strict as boolean;
    return { type: 'function', function: fn };
  });
}

function toolChoiceOf(choice: unknown): ToolChoice {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (isObject(choice) && choice.type === 'function' && typeof choice.name === 'string' && choice.name !== '') return { type: 'function', function: { name: choice.name } };
  throw invalid('tool_choice', 'tool_choice must be "auto", "none", "required" or {"type": "function", "name": …}.');
}

function formatOf(text: unknown): ResponseFormat | undefined {
  if (text == null) return undefined;
  if (!isObject(text)) throw invalid('text', 'text must be an object.');
  const format = text.format;
  if (format == null) return undefined;
  if (!isObject(format)) throw invalid('text.format', 'text.format must be an object.');
  if (format.type === 'text') return { type: 'text' };
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    if (typeof format.name !== 'string' || format.name === '') throw invalid('text.format.name', 'text.format.name must be a non-empty string.');
    if (!isObject(format.schema)) throw invalid('text.format.schema', 'text.format.schema must be a JSON Schema object.');
    const schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null } = { name: format.name, schema: format.schema };
    if (typeof format.description === 'string') schema.description = format.description;
    if (format.strict != null) schema.strict = format.strict as boolean;
    return { type: 'json_schema', json_schema: schema };
  }
  throw invalid('text.format.type', 'text.format.type must be text, json_object or json_schema.');
}

function reasoningEffortOf(reasoning: unknown): unknown {
  if (reasoning == null) return undefined;
  if (!isObject(reasoning)) throw invalid('reasoning', 'reasoning must be an object.');
  return reasoning.effort ?? undefined;
}

/**
 * An error the chat pipeline raised about the translated request, naming the Responses request's
 * fields instead (the same error when it names none). Applying it twice changes nothing.
 */
export function inResponsesTerms(err: unknown): unknown {
  if (!(err instanceof GatewayError) || err.status >= 500) return err;
  const param = responsesParamOf(err.param);
  const message = responsesTermsOf(err.message);
  if (param === err.param && message === err.message) return err;
  return new GatewayError(err.code, message, { param, retryAfterSeconds: err.retryAfterSeconds, shouldRetry: err.shouldRetry, headers: err.headers, cause: err });
}

/** The chat request's names in an error message, in the Responses request's terms. */
export function responsesTermsOf(message: string): string {
  return message
    .replace(/\bmax_completion_tokens\b|\bmax_tokens\b/g, 'max_output_tokens')
    .replace(/\btools\[(\d+)\]\.function\./g, 'tools[$1].')
    .replace(/\bresponse_format\.json_schema\b|\bresponse_format\b/g, 'text.format')
    .replace(/\breasoning_effort\b/g, 'reasoning.effort')
    .replace(/\bmessages\[\d+\](\.[\w[\]]+)*/g, 'input')
    .replace(/\bthe messages\b/g, 'the input');
}

/**
 * The chat validator's names for fields, in the Responses request's terms, for the errors the
 * chat pipeline raises about the translated request.
 */
export function responsesParamOf(param: string | null): string | null {
  if (param === null) return null;
  if (param === 'max_completion_tokens' || param === 'max_tokens') return 'max_output_tokens';
  if (param === 'messages' || param.startsWith('messages[')) return 'input';
  if (param.startsWith('response_format')) return 'text.format';
  if (param === 'reasoning_effort') return 'reasoning.effort';
  const tool = /^tools\[(\d+)\]\.function\.(.*)$/.exec(param);
  if (tool !== null) return `tools[${tool[1]}].${tool[2]}`;
  if (param.startsWith('tool_choice')) return 'tool_choice';
  return param;
}
