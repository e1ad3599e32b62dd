/**
 * OpenAI chat request → Anthropic Messages request. Anthropic is stricter than OpenAI about the
 * conversation's shape (no system role, strictly alternating turns, tool results inside user
 * turns), so the translation reshapes the conversation rather than mapping message by message.
 */
import { GatewayError } from '../../errors/index.js';
import { inlineImageType, parseDataUrl } from '../data-url.js';
import { parseToolArguments } from '../tool-arguments.js';
import { fittedToolCallId, fitsAnthropic, standInToolCallId } from '../tool-call-id-fit.js';
import type { ChatCompletionRequest, ChatMessage, ContentPart, ToolChoice } from '../../protocol/chat.js';
import type { ChatCall } from '../types.js';
import type {
  ContentBlockParam,
  ImageBlockParam,
  MessageParam,
  MessagesRequest,
  TextBlockParam,
  ToolChoiceParam,
  ToolParam,
  ToolResultBlockParam,
  ToolUseBlockParam,
} from './wire.js';

/** Anthropic accepts only these image types; anything else would be a late, vaguer upstream 400. */
const IMAGE_MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

export function toMessagesRequest(call: ChatCall, stream: boolean): MessagesRequest {
  const req = call.request;
  checkUnsupported(req);

  const { system, messages } = translateMessages(req.messages);
  const body: MessagesRequest = {
    model: call.upstreamModel,
    // Anthropic requires an output cap; OpenAI callers usually leave it out.
    max_tokens: req.max_completion_tokens ?? req.max_tokens ?? call.defaultMaxTokens,
    messages,
  };
  if (system !== undefined) body.system = system;
  if (req.temperature != null) body.temperature = req.temperature;
  // Anthropic asks for one of the two, and its newer models refuse both with a 400; temperature is
  // the one callers set on purpose far more often.
  else if (req.top_p != null) body.top_p = req.top_p;
  const stops = stopSequences(req.stop);
  if (stops.length > 0) body.stop_sequences = stops;
  if (req.tools !== undefined && req.tools.length > 0) {
    body.tools = req.tools.map(toTool);
    const choice = toToolChoice(req.tool_choice, req.parallel_tool_calls === false);
    if (choice !== undefined) body.tool_choice = choice;
  }
  if (typeof req.user === 'string' && req.user !== '') body.metadata = { user_id: req.user };
  if (stream) body.stream = true;
  return body;
}

/**
 * Parameters whose meaning Anthropic cannot honour and that change what the caller gets back
 * are refused; pure sampling hints (penalties, seed, logit_bias) are dropped silently, as
 * they only nudge the output.
 */
function checkUnsupported(req: ChatCompletionRequest): void {
  if (req.n != null && req.n > 1) {
    throw new GatewayError('incompatible_parameters', 'This provider can only generate one choice per request; n must be 1.', { param: 'n' });
  }
  if (req.temperature != null && req.temperature > 1) {
    throw new GatewayError(
      'incompatible_parameters',
      `temperature ${req.temperature} is out of range for this provider, which accepts 0–1.`,
      { param: 'temperature' },
    );
  }
  const format = req.response_format?.type;
  if (format === 'json_object' || format === 'json_schema') {
    throw new GatewayError('incompatible_parameters', `This provider does not support response_format "${format}".`, { param: 'response_format' });
  }
  if (req.logprobs === true) {
    throw new GatewayError('incompatible_parameters', 'This provider does not return log probabilities.', { param: 'logprobs' });
  }
}

/**
 * An empty stop sequence can never match, so it is dropped; Anthropic refuses one that is only
 * whitespace (OpenAI callers send "\n"), and without it the answer would run past where the caller
 * wanted it cut, so that is refused here, naming the field.
 */
function stopSequences(stop: ChatCompletionRequest['stop']): string[] {
  if (stop == null) return [];
  const list = typeof stop === 'string' ? [stop] : stop;
  const kept: string[] = [];
  list.forEach((sequence, i) => {
    if (sequence === '') return;
    if (sequence.trim() === '') {
      throw new GatewayError('incompatible_parameters', 'This provider does not accept stop sequences made only of whitespace.', {
        param: typeof stop === 'string' ? 'stop' : `stop[${i}]`,
      });
    }
    kept.push(sequence);
  });
  return kept;
}

function translateMessages(input: ChatMessage[]): { system: string | undefined; messages: MessageParam[] } {
  const systemParts: string[] = [];
  const turns: MessageParam[] = [];
  const toolUseIds = new ToolUseIds();

  input.forEach((msg, i) => {
    switch (msg.role) {
      case 'system':
      case 'developer': {
        // Anthropic has one top-level system prompt; instructions given mid-conversation move there too.
        const text = systemText(msg, i);
        if (text !== '') systemParts.push(text);
        return;
      }
      case 'user':
        push(turns, 'user', userBlocks(msg, i));
        return;
      case 'assistant':
        push(turns, 'assistant', assistantBlocks(msg, i, toolUseIds));
        return;
      case 'tool':
        push(turns, 'user', [toolResultBlock(msg, i, toolUseIds)]);
        return;
      default:
        throw new GatewayError('invalid_parameter', `Unknown message role "${String(msg.role)}".`, { param: `messages[${i}].role` });
    }
  });

  // A caller's last message that was only whitespace is left out (see userBlocks): what is left
  // would end in the assistant's turn, which Anthropic continues (or, on newer models, refuses)
  // instead of answering.
  const lastIndex = input.findLastIndex((msg) => msg.role !== 'system' && msg.role !== 'developer');
  const last = input[lastIndex];
  if (last !== undefined && last.role === 'user' && turns[turns.length - 1]?.role === 'assistant') {
    throw new GatewayError('incompatible_parameters', `messages[${lastIndex}] has no text this provider accepts (only whitespace), so the conversation would end with the assistant's turn.`, {
      param: `messages[${lastIndex}]`,
    });
  }
  if (turns.length === 0) {
    // OpenAI answers a conversation of system messages alone; Anthropic needs a turn to answer.
    throw new GatewayError('incompatible_parameters', 'This provider needs at least one user or assistant message with text in it.', { param: 'messages' });
  }
  for (const turn of turns) {
    // Anthropic wants tool results at the start of a user turn, before any text.
    if (turn.role === 'user') turn.content = stablePartition(turn.content, (b) => b.type === 'tool_result');
  }
  return { system: systemParts.length > 0 ? systemParts.join('\n\n') : undefined, messages: turns };
}

/** Appends blocks as a turn, merging into the previous turn of the same role: Anthropic requires alternation. */
function push(turns: MessageParam[], role: 'user' | 'assistant', blocks: ContentBlockParam[]): void {
  if (blocks.length === 0) return;
  const last = turns[turns.length - 1];
  if (last !== undefined && last.role === role) last.content.push(...blocks);
  else turns.push({ role, content: blocks });
}

function stablePartition<T>(items: T[], first: (item: T) => boolean): T[] {
  return [...items.filter(first), ...items.filter((item) => !first(item))];
}

function systemText(msg: ChatMessage, i: number): string {
  if (msg.content == null) return '';
  if (typeof msg.content === 'string') return msg.content;
  return msg.content
    .map((part, j) => {
      if (part.type === 'text') return part.text;
      throw new GatewayError('invalid_parameter', `${msg.role} messages may only contain text parts.`, { param: `messages[${i}].content[${j}]` });
    })
    .join('\n\n');
}

function userBlocks(msg: ChatMessage, i: number): ContentBlockParam[] {
  if (msg.content == null) return [];
  if (typeof msg.content === 'string') return textBlocks(msg.content);
  return msg.content.flatMap((part, j) => userPart(part, `messages[${i}].content[${j}]`));
}

function userPart(part: ContentPart, param: string): ContentBlockParam[] {
  switch (part.type) {
    case 'text':
      return textBlocks(part.text);
    case 'image_url':
      return [imageBlock(part.image_url.url, `${param}.image_url.url`)];
    case 'file':
      return [documentBlock(part.file.file_data, param)];
    case 'refusal':
      return textBlocks(part.refusal);
    case 'input_audio':
      throw new GatewayError('incompatible_parameters', 'This provider does not accept audio input.', { param });
    default:
      throw new GatewayError('invalid_parameter', 'Unknown content part type.', { param: `${param}.type` });
  }
}

function assistantBlocks(msg: ChatMessage, i: number, toolUseIds: ToolUseIds): ContentBlockParam[] {
  const blocks: ContentBlockParam[] = [];
  if (typeof msg.content === 'string') {
    blocks.push(...textBlocks(msg.content));
  } else if (Array.isArray(msg.content)) {
    msg.content.forEach((part, j) => {
      if (part.type === 'text') blocks.push(...textBlocks(part.text));
      else if (part.type === 'refusal') blocks.push(...textBlocks(part.refusal));
      else throw new GatewayError('invalid_parameter', 'Assistant messages may only contain text or refusal parts.', { param: `messages[${i}].content[${j}]` });
    });
  } else if (typeof msg.refusal === 'string') {
    // A refusal is what the assistant said; dropping it would change the conversation.
    blocks.push(...textBlocks(msg.refusal));
  }
  (msg.tool_calls ?? []).forEach((call, j) => {
    const block: ToolUseBlockParam = {
      type: 'tool_use',
      id: toolUseIds.call(call.id),
      name: call.function.name,
      input: parseToolArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`),
    };
    blocks.push(block);
  });
  return blocks;
}

function toolResultBlock(msg: ChatMessage, i: number, toolUseIds: ToolUseIds): ToolResultBlockParam {
  if (typeof msg.tool_call_id !== 'string' || msg.tool_call_id === '') {
    throw new GatewayError('missing_required_parameter', 'Tool messages need a tool_call_id.', { param: `messages[${i}].tool_call_id` });
  }
  const block: ToolResultBlockParam = { type: 'tool_result', tool_use_id: toolUseIds.result(msg.tool_call_id) };
  if (typeof msg.content === 'string') {
    if (!isBlank(msg.content)) block.content = msg.content;
  } else if (Array.isArray(msg.content)) {
    const parts: TextBlockParam[] = msg.content.flatMap((part, j) => {
      if (part.type === 'text') return textBlocks(part.text);
      throw new GatewayError('invalid_parameter', 'Tool messages may only contain text parts.', { param: `messages[${i}].content[${j}]` });
    });
    if (parts.length > 0) block.content = parts;
  }
  return block;
}

/**
 * The ids tool calls and their results go upstream under. Anthropic refuses a conversation in
 * which two tool_use blocks share an id; OpenAI takes one, and servers that number their calls per
 * turn (`call_0` in every turn) write such histories, which would then fail on every later turn
 * once moved or failed over to Anthropic. A repeated id goes as a stand-in made from it and its
 * place, and the results that follow answer the latest call of that id, as OpenAI reads them.
 */
class ToolUseIds {
  private readonly sent = new Set<string>();
  /** The caller's id → the upstream id of its latest call. */
  private readonly latest = new Map<string, string>();

  call(id: string): string {
    let upstream = fittedToolCallId(id, fitsAnthropic);
    for (let n = 1; this.sent.has(upstream); n++) upstream = standInToolCallId(`${id}\u0000${n}`);
    this.sent.add(upstream);
    this.latest.set(id, upstream);
    return upstream;
  }

  result(id: string): string {
    return this.latest.get(id) ?? fittedToolCallId(id, fitsAnthropic);
  }
}

/**
 * Anthropic rejects text blocks that are empty or only whitespace, while OpenAI callers send them
 * freely ("" beside tool calls, an earlier reply that was only a line break); they say nothing.
 */
function textBlocks(text: string): TextBlockParam[] {
  return isBlank(text) ? [] : [{ type: 'text', text }];
}

function isBlank(text: string): boolean {
  return text.trim() === '';
}

function imageBlock(url: string, param: string): ImageBlockParam {
  if (url.startsWith('data:')) {
    const { mediaType, base64 } = parseDataUrl(url, param);
    const type = inlineImageType(mediaType, base64);
    if (!IMAGE_MEDIA_TYPES.has(type)) {
      throw new GatewayError('incompatible_parameters', `This provider accepts images of type ${[...IMAGE_MEDIA_TYPES].join(', ')}; got ${type}.`, { param });
    }
    return { type: 'image', source: { type: 'base64', media_type: type, data: base64 } };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw new GatewayError('invalid_parameter', 'An image URL must be an http(s) URL or a data: URL.', { param });
}

function documentBlock(fileData: string | undefined, param: string): ContentBlockParam {
  // Files by id live in OpenAI's storage, which this provider cannot read.
  if (fileData === undefined) {
    throw new GatewayError('incompatible_parameters', 'This provider accepts files only inline, as file_data.', { param: `${param}.file` });
  }
  const dataParam = `${param}.file.file_data`;
  const { mediaType, base64 } = fileData.startsWith('data:')
    ? parseDataUrl(fileData, dataParam)
    : { mediaType: 'application/pdf', base64: fileData };
  if (mediaType !== 'application/pdf') {
    throw new GatewayError('incompatible_parameters', `This provider accepts only PDF files; got ${mediaType}.`, { param: dataParam });
  }
  return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: base64 } };
}

function toTool(tool: { function: { name: string; description?: string; parameters?: Record<string, unknown> } }): ToolParam {
  const out: ToolParam = {
    name: tool.function.name,
    input_schema: objectSchema(tool.function.parameters),
  };
  if (tool.function.description !== undefined) out.description = tool.function.description;
  return out;
}

/**
 * OpenAI takes a tool without parameters, or with a schema that leaves out `type` (`{}`, as
 * no-argument MCP tools often send); Anthropic refuses any `input_schema` without `type: "object"`.
 * A schema that names another type is sent as it is, for Anthropic to refuse in its own words.
 */
function objectSchema(parameters: Record<string, unknown> | undefined): Record<string, unknown> {
  if (parameters === undefined) return { type: 'object', properties: {} };
  return parameters.type === undefined ? { type: 'object', ...parameters } : parameters;
}

function toToolChoice(choice: ToolChoice | undefined, disableParallel: boolean): ToolChoiceParam | undefined {
  const parallel = disableParallel ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined) return disableParallel ? { type: 'auto', ...parallel } : undefined;
  if (choice === 'auto') return { type: 'auto', ...parallel };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...parallel };
  return { type: 'tool', name: choice.function.name, ...parallel };
}
