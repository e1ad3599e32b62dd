/**
 * OpenAI chat request → Gemini GenerateContentRequest. Gemini keeps the system prompt apart,
 * calls the assistant "model", names tool results by function rather than by call id, and takes
 * media only inline (or from its own file store), so the conversation is reshaped rather than
 * mapped message by message. Sampling options go into `generationConfig`.
 */
import { GatewayError } from '../../errors/index.js';
import { inlineImageType, parseDataUrl } from '../data-url.js';
import { parseToolArguments } from '../tool-arguments.js';
import type { ChatCompletionRequest, ChatMessage, ContentPart, FunctionTool, ResponseFormat, ToolChoice } from '../../protocol/chat.js';
import type { ChatCall } from '../types.js';
import { thoughtSignatureOf } from './tool-call-id.js';
import type { Content, FunctionDeclaration, GenerateContentRequest, GenerationConfig, Part, ToolConfig } from './wire.js';

/**
 * Google's documented stand-in for a function call whose signature is lost (a history written by
 * another provider, or by a client that rebuilt the ids): it passes Gemini 3's validation.
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

export function toGenerateContentRequest(call: ChatCall): GenerateContentRequest {
  const req = call.request;
  checkUnsupported(req);

  const generation = geminiGeneration(call.upstreamModel);
  checkJsonModeWithTools(req, generation);
  const { system, contents } = translateMessages(req.messages, generation >= 3);
  const body: GenerateContentRequest = { contents };
  if (system !== undefined) body.systemInstruction = { parts: [{ text: system }] };
  if (req.tools !== undefined && req.tools.length > 0) {
    body.tools = [{ functionDeclarations: req.tools.map((tool, i) => toFunctionDeclaration(tool, i)) }];
    const toolConfig = toToolConfig(req.tool_choice);
    if (toolConfig !== undefined) body.toolConfig = toolConfig;
  }
  body.generationConfig = generationConfig(req, call.defaultMaxTokens);
  return body;
}

/**
 * Parameters Gemini cannot honour and whose absence would change what the caller gets back are
 * refused; logit_bias is dropped, as elsewhere in the gateway: its token ids belong to OpenAI's
 * tokenizer and mean nothing to Gemini's. So are the presence and frequency penalties, sampling
 * hints that Gemini 2.5 and later refuse with a 400 ("Penalty is not enabled for models/...").
 */
function checkUnsupported(req: ChatCompletionRequest): void {
  if (req.logprobs === true) {
    throw new GatewayError('incompatible_parameters', 'This provider does not return log probabilities.', { param: 'logprobs' });
  }
  if (req.top_logprobs != null && req.top_logprobs > 0) {
    throw new GatewayError('incompatible_parameters', 'This provider does not return log probabilities.', { param: 'top_logprobs' });
  }
  // Gemini has no switch to stop parallel calls; a caller relying on one call per turn would break.
  if (req.parallel_tool_calls === false && req.tools !== undefined && req.tools.length > 0) {
    throw new GatewayError('incompatible_parameters', 'This provider cannot be kept from calling several tools at once; parallel_tool_calls must be true.', {
      param: 'parallel_tool_calls',
    });
  }
}

/**
 * Gemini before 3 refuses function declarations beside a JSON response type, with a 400 after the
 * request was admitted; dropping either would change what the caller gets back. A model whose name
 * does not tell its generation is taken for an older one.
 */
function checkJsonModeWithTools(req: ChatCompletionRequest, generation: number): void {
  const format = req.response_format?.type;
  if ((format === 'json_object' || format === 'json_schema') && req.tools !== undefined && req.tools.length > 0 && generation < 3) {
    throw new GatewayError('incompatible_parameters', `This model cannot be held to response_format "${format}" while it may call tools (Gemini 3 and later can); drop one of the two.`, {
      param: 'response_format',
    });
  }
}

/**
 * The model's major version, from its name (`gemini-2.5-flash` → 2), or 0 when the name does not
 * say. Gemini 3 and later refuse a function call without its thought signature, and take JSON mode
 * beside tools; earlier models do neither.
 */
export function geminiGeneration(upstreamModel: string): number {
  const match = /gemini-(\d+)/i.exec(upstreamModel);
  return match === null ? 0 : Number(match[1]);
}

function generationConfig(req: ChatCompletionRequest, defaultMaxTokens: number): GenerationConfig {
  const config: GenerationConfig = {
    // Sent even when the caller gave none, so the model's configured cap applies as with other providers.
    maxOutputTokens: req.max_completion_tokens ?? req.max_tokens ?? defaultMaxTokens,
  };
  if (req.temperature != null) config.temperature = req.temperature;
  if (req.top_p != null) config.topP = req.top_p;
  if (req.stop != null) {
    // An empty stop sequence stops nothing; dropped, as for Anthropic.
    const stops = (typeof req.stop === 'string' ? [req.stop] : req.stop).filter((stop) => stop !== '');
    if (stops.length > 0) config.stopSequences = stops;
  }
  if (req.n != null && req.n !== 1) config.candidateCount = req.n;
  // Gemini's seed is a 32-bit integer and a larger one is a 400; OpenAI callers send 64-bit seeds.
  // Keeping the low 32 bits still gives the same seed upstream for the same seed sent.
  if (req.seed != null) config.seed = Number(BigInt.asIntN(32, BigInt(req.seed)));
  applyResponseFormat(config, req.response_format);
  return config;
}

function applyResponseFormat(config: GenerationConfig, format: ResponseFormat | undefined): void {
  if (format === undefined || format.type === 'text') return;
  config.responseMimeType = 'application/json';
  if (format.type === 'json_schema' && format.json_schema.schema !== undefined) config.responseJsonSchema = format.json_schema.schema;
}

/** What Gemini documents it reads; GIF among them is not, and is a 400 upstream. */
const IMAGE_MEDIA_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif']);

function translateMessages(input: ChatMessage[], fillSignatures: boolean): { system: string | undefined; contents: Content[] } {
  const systemParts: string[] = [];
  const contents: Content[] = [];
  /** tool_call_id → function name: Gemini matches a result to its call by name. */
  const toolNames = new Map<string, string>();
  /**
   * tool_call_id → its place among its step's calls. Gemini matches results to calls by name and
   * order, OpenAI callers by id in any order: two calls of one function must get their results in
   * the order they were made, or each gets the other's.
   */
  const callPlace = new Map<string, number>();
  const resultPlace = new Map<Part, number>();

  input.forEach((msg, i) => {
    switch (msg.role) {
      case 'system':
      case 'developer': {
        // Gemini has one system instruction; instructions given mid-conversation move there too.
        const text = textOnly(msg, i, `${msg.role} messages may only contain text parts.`);
        if (text !== '') systemParts.push(text);
        return;
      }
      case 'user':
        push(contents, 'user', userParts(msg, i));
        return;
      case 'assistant':
        push(contents, 'model', modelParts(msg, i, toolNames, fillSignatures));
        // One count over the whole conversation: consecutive assistant messages merge into one turn.
        for (const call of msg.tool_calls ?? []) callPlace.set(call.id, callPlace.size);
        return;
      case 'tool': {
        const part = functionResponsePart(msg, i, toolNames);
        resultPlace.set(part, callPlace.get(msg.tool_call_id as string) ?? Number.MAX_SAFE_INTEGER);
        push(contents, 'user', [part]);
        return;
      }
      default:
        throw new GatewayError('invalid_parameter', `Unknown message role "${String(msg.role)}".`, { param: `messages[${i}].role` });
    }
  });

  if (contents.length === 0) {
    // OpenAI answers a conversation of system messages alone; Gemini needs a turn to answer, and
    // would refuse the request after admission as an upstream error.
    throw new GatewayError('incompatible_parameters', 'This provider needs at least one user or assistant message with content in it.', { param: 'messages' });
  }
  checkTurnOrder(input, contents);
  for (const content of contents) {
    // The results of one step's calls belong together, ahead of anything the user added.
    if (content.role !== 'user') continue;
    const parts = stablePartition(content.parts, (p) => p.functionResponse !== undefined);
    const results = parts.filter((p) => p.functionResponse !== undefined).sort((a, b) => (resultPlace.get(a) ?? 0) - (resultPlace.get(b) ?? 0));
    content.parts = [...results, ...parts.slice(results.length)];
  }
  return { system: systemParts.length > 0 ? systemParts.join('\n\n') : undefined, contents };
}

/**
 * Gemini answers only a conversation that ends with the user's turn (text or function results),
 * and refuses one whose first turn is a function call; both are a 400 after admission otherwise.
 * OpenAI continues an assistant message put last, Gemini does not, so it is refused, not dropped.
 */
function checkTurnOrder(input: ChatMessage[], contents: Content[]): void {
  const lastIndex = input.findLastIndex((msg) => msg.role !== 'system' && msg.role !== 'developer');
  if (contents[contents.length - 1]?.role === 'model') {
    throw new GatewayError('incompatible_parameters', 'This provider answers only a conversation that ends with a user or tool message with content in it.', {
      param: `messages[${lastIndex}]`,
    });
  }
  const first = contents[0];
  if (first?.role === 'model' && first.parts.some((part) => part.functionCall !== undefined)) {
    const firstIndex = input.findIndex((msg) => msg.role === 'assistant');
    throw new GatewayError('incompatible_parameters', 'This provider refuses a conversation whose first turn is a tool call; start it with a user message.', {
      param: `messages[${firstIndex}]`,
    });
  }
}

/** Appends parts as a turn, merging into the previous turn of the same role, as Gemini expects alternation. */
function push(contents: Content[], role: 'user' | 'model', parts: Part[]): void {
  if (parts.length === 0) return;
  const last = contents[contents.length - 1];
  if (last !== undefined && last.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

function stablePartition<T>(items: T[], first: (item: T) => boolean): T[] {
  return [...items.filter(first), ...items.filter((item) => !first(item))];
}

function textOnly(msg: ChatMessage, i: number, refusal: string): string {
  if (msg.content == null) return '';
  if (typeof msg.content === 'string') return msg.content;
  return msg.content
    .map((part, j) => {
      if (part.type === 'text') return part.text;
      throw new GatewayError('invalid_parameter', refusal, { param: `messages[${i}].content[${j}]` });
    })
    .join('\n\n');
}

/** Gemini rejects empty text parts, while OpenAI callers send "" freely (e.g. beside tool calls). */
function textParts(text: string): Part[] {
  return text === '' ? [] : [{ text }];
}

function userParts(msg: ChatMessage, i: number): Part[] {
  if (msg.content == null) return [];
  if (typeof msg.content === 'string') return textParts(msg.content);
  return msg.content.flatMap((part, j) => userPart(part, `messages[${i}].content[${j}]`));
}

function userPart(part: ContentPart, param: string): Part[] {
  switch (part.type) {
    case 'text':
      return textParts(part.text);
    case 'image_url':
      return [imagePart(part.image_url.url, `${param}.image_url.url`)];
    case 'input_audio':
      return [{ inlineData: { mimeType: `audio/${part.input_audio.format}`, data: part.input_audio.data } }];
    case 'file':
      return [filePart(part.file.file_data, param)];
    case 'refusal':
      return textParts(part.refusal);
    default:
      throw new GatewayError('invalid_parameter', 'Unknown content part type.', { param: `${param}.type` });
  }
}

function imagePart(url: string, param: string): Part {
  if (url.startsWith('data:')) {
    const { mediaType, base64 } = parseDataUrl(url, param);
    if (!mediaType.startsWith('image/')) {
      throw new GatewayError('incompatible_parameters', `An image_url part must hold an image; got ${mediaType}.`, { param });
    }
    const type = inlineImageType(mediaType, base64);
    if (!IMAGE_MEDIA_TYPES.has(type)) {
      throw new GatewayError('incompatible_parameters', `This provider accepts images of type ${[...IMAGE_MEDIA_TYPES].join(', ')}; got ${type}.`, { param });
    }
    return { inlineData: { mimeType: type, data: base64 } };
  }
  // Gemini reads remote media only from its own file store; fetching for the caller is not the gateway's job.
  if (/^https?:\/\//i.test(url)) {
    throw new GatewayError('incompatible_parameters', 'This provider accepts images only inline, as data: URLs.', { param });
  }
  throw new GatewayError('invalid_parameter', 'An image URL must be an http(s) URL or a data: URL.', { param });
}

function filePart(fileData: string | undefined, param: string): Part {
  // Files by id live in OpenAI's storage, which this provider cannot read.
  if (fileData === undefined) {
    throw new GatewayError('incompatible_parameters', 'This provider accepts files only inline, as file_data.', { param: `${param}.file` });
  }
  const dataParam = `${param}.file.file_data`;
  // Bare base64 is a PDF by OpenAI's convention; a data: URL names its own type.
  const { mediaType, base64 } = fileData.startsWith('data:') ? parseDataUrl(fileData, dataParam) : { mediaType: 'application/pdf', base64: fileData };
  return { inlineData: { mimeType: mediaType, data: base64 } };
}

function modelParts(msg: ChatMessage, i: number, toolNames: Map<string, string>, fillSignatures: boolean): Part[] {
  const parts: Part[] = [];
  if (typeof msg.content === 'string') {
    parts.push(...textParts(msg.content));
  } else if (Array.isArray(msg.content)) {
    msg.content.forEach((part, j) => {
      if (part.type === 'text') parts.push(...textParts(part.text));
      else if (part.type === 'refusal') parts.push(...textParts(part.refusal));
      else throw new GatewayError('invalid_parameter', 'Assistant messages may only contain text or refusal parts.', { param: `messages[${i}].content[${j}]` });
    });
  } else if (typeof msg.refusal === 'string') {
    // A refusal is what the assistant said; dropping it would change the conversation.
    parts.push(...textParts(msg.refusal));
  }

  const calls: Part[] = (msg.tool_calls ?? []).map((call, j) => {
    toolNames.set(call.id, call.function.name);
    const part: Part = {
      functionCall: { name: call.function.name, args: parseToolArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`) },
    };
    const signature = thoughtSignatureOf(call.id);
    if (signature !== undefined) part.thoughtSignature = signature;
    return part;
  });
  // Of parallel calls only the first carries a signature, so one stand-in per step is enough.
  const first = calls[0];
  if (fillSignatures && first !== undefined && calls.every((c) => c.thoughtSignature === undefined)) first.thoughtSignature = SKIP_SIGNATURE;
  parts.push(...calls);
  return parts;
}

function functionResponsePart(msg: ChatMessage, i: number, toolNames: Map<string, string>): Part {
  if (typeof msg.tool_call_id !== 'string' || msg.tool_call_id === '') {
    throw new GatewayError('missing_required_parameter', 'Tool messages need a tool_call_id.', { param: `messages[${i}].tool_call_id` });
  }
  const name = toolNames.get(msg.tool_call_id) ?? msg.name;
  if (name === undefined || name === '') {
    throw new GatewayError('invalid_parameter', 'A tool message must answer a tool call made earlier in the conversation.', { param: `messages[${i}].tool_call_id` });
  }
  const output = textOnly(msg, i, 'Tool messages may only contain text parts.');
  // The response must be an object; `output` is the key Google's documentation uses for a result.
  return { functionResponse: { name, response: { output } } };
}

function toFunctionDeclaration(tool: FunctionTool, i: number): FunctionDeclaration {
  // OpenAI's names may start with a digit or a dash; Gemini's must start with a letter or an
  // underscore, and would be refused upstream after admission.
  if (!/^[A-Za-z_]/.test(tool.function.name)) {
    throw new GatewayError('incompatible_parameters', 'This provider needs function names that start with a letter or an underscore.', {
      param: `tools[${i}].function.name`,
    });
  }
  const declaration: FunctionDeclaration = { name: tool.function.name };
  if (tool.function.description !== undefined) declaration.description = tool.function.description;
  if (tool.function.parameters !== undefined) declaration.parametersJsonSchema = tool.function.parameters;
  return declaration;
}

function toToolConfig(choice: ToolChoice | undefined): ToolConfig | undefined {
  if (choice === undefined) return undefined;
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
}
