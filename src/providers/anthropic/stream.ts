/**
 * Anthropic's streaming events → OpenAI `chat.completion.chunk`s. Anthropic streams content
 * blocks (text, tool_use, ...) each with its own index; OpenAI streams one delta per choice, with
 * tool calls numbered among tool calls only. The translator is a state machine over events, kept
 * apart from the transport so it can be tested event by event.
 */
import { GatewayError } from '../../errors/index.js';
import type { ChatCompletionChunk, FinishReason, ToolCallDelta, Usage } from '../../protocol/chat.js';
import type { StreamPiece } from '../types.js';
import { anthropicStreamError } from './errors.js';
import { isRecord, malformed, parseJson, toFinishReason, toUsage } from './response.js';

export interface StreamEvent {
  event: string | undefined;
  data: string;
}

export interface StreamContext {
  providerId: string;
  /** Used for `model` until message_start names the model that serves the stream. */
  upstreamModel: string;
  created: number;
}

type Delta = ChatCompletionChunk['choices'][number]['delta'];

export class StreamTranslator {
  private id: string | undefined;
  /** Input-side counts from message_start, updated if a message_delta repeats them. */
  private inputUsage: Record<string, unknown> = {};
  private outputTokens = 0;
  private stopReason: unknown = null;
  /** Anthropic content-block index → OpenAI tool call index. */
  private readonly toolIndexByBlock = new Map<number, number>();
  /** Tool calls (by OpenAI index) whose arguments have not had a character yet. */
  private readonly toolsWithoutArguments = new Set<number>();
  private finishedFlag = false;
  private model: string | undefined;

  constructor(private readonly ctx: StreamContext) {}

  /** True once message_stop arrived: the stream ended properly. */
  get finished(): boolean {
    return this.finishedFlag;
  }

  /** Usage so far, so that a stream cut midway still accounts for what was produced. */
  get usage(): Usage | null {
    return this.id === undefined ? null : toUsage(this.inputUsage, this.outputTokens);
  }

  /** The pieces to send for one upstream event; throws a GatewayError for an error event or a malformed one. */
  handle(event: StreamEvent): StreamPiece[] {
    if (event.event === 'ping') return [];
    if (event.event === 'error') throw anthropicStreamError(this.ctx.providerId, event.data);

    const data = parseJson(event.data);
    if (!isRecord(data)) throw malformed('a stream event is not a JSON object');
    const type = typeof data.type === 'string' ? data.type : event.event;
    if (type === 'ping') return [];
    if (type === 'error') throw anthropicStreamError(this.ctx.providerId, event.data);
    if (this.finishedFlag) return [];

    if (type === 'message_start') return this.messageStart(data);
    if (this.id === undefined) throw malformed(`the stream sent "${String(type)}" before message_start`);
    switch (type) {
      case 'content_block_start':
        return this.blockStart(data);
      case 'content_block_delta':
        return this.blockDelta(data);
      case 'content_block_stop':
        return this.blockStop(data);
      case 'message_delta':
        this.messageDelta(data);
        return [];
      case 'message_stop':
        return this.messageStop();
      default:
        // Unknown event types are newer additions we can skip.
        return [];
    }
  }

  private messageStart(data: Record<string, unknown>): StreamPiece[] {
    const message = data.message;
    if (!isRecord(message) || typeof message.id !== 'string' || message.id === '') throw malformed('message_start has no message id');
    if (this.id !== undefined) throw malformed('the stream sent message_start twice');
    this.id = message.id;
    if (typeof message.model === 'string' && message.model !== '') this.model = message.model;
    if (isRecord(message.usage)) {
      this.inputUsage = { ...message.usage };
      this.outputTokens = numberOr(message.usage.output_tokens, 0);
    }
    const opening = this.piece({ role: 'assistant', content: '' });
    OPENINGS.add(opening);
    return [opening];
  }

  private blockStart(data: Record<string, unknown>): StreamPiece[] {
    const index = data.index;
    const block = data.content_block;
    if (typeof index !== 'number' || !isRecord(block)) throw malformed('content_block_start has no index or block');
    if (block.type === 'text') {
      return typeof block.text === 'string' && block.text !== '' ? [this.piece({ content: block.text })] : [];
    }
    if (block.type !== 'tool_use') return [];
    if (typeof block.id !== 'string' || typeof block.name !== 'string') throw malformed('a tool_use block has no id or name');
    const toolIndex = this.toolIndexByBlock.size;
    this.toolIndexByBlock.set(index, toolIndex);
    // The input normally starts empty and arrives as input_json_delta; a pre-filled one is sent whole.
    const prefilled = isRecord(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
    if (prefilled === '') this.toolsWithoutArguments.add(toolIndex);
    const call: ToolCallDelta = { index: toolIndex, id: block.id, type: 'function', function: { name: block.name, arguments: prefilled } };
    return [this.piece({ tool_calls: [call] })];
  }

  private blockDelta(data: Record<string, unknown>): StreamPiece[] {
    const delta = data.delta;
    if (typeof data.index !== 'number' || !isRecord(delta)) throw malformed('content_block_delta has no index or delta');
    if (delta.type === 'text_delta') {
      if (typeof delta.text !== 'string') throw malformed('a text_delta has no text');
      return delta.text === '' ? [] : [this.piece({ content: delta.text }, null, textTokens(delta.text))];
    }
    if (delta.type === 'input_json_delta') {
      const toolIndex = this.toolIndexByBlock.get(data.index);
      if (toolIndex === undefined || typeof delta.partial_json !== 'string') throw malformed('an input_json_delta does not belong to a tool_use block');
      if (delta.partial_json === '') return [];
      this.toolsWithoutArguments.delete(toolIndex);
      return [this.piece({ tool_calls: [{ index: toolIndex, function: { arguments: delta.partial_json } }] }, null, textTokens(delta.partial_json))];
    }
    // thinking, signature and citation deltas have no OpenAI counterpart.
    return [];
  }

  /**
   * A tool called without arguments streams no input at all (or only ""): its arguments are sent
   * as `{}` when its block ends, as OpenAI streams them and as the non-streamed answer has them,
   * because a caller that parses the arguments it accumulated would fail on "".
   */
  private blockStop(data: Record<string, unknown>): StreamPiece[] {
    const toolIndex = typeof data.index === 'number' ? this.toolIndexByBlock.get(data.index) : undefined;
    if (toolIndex === undefined || !this.toolsWithoutArguments.delete(toolIndex)) return [];
    return [this.piece({ tool_calls: [{ index: toolIndex, function: { arguments: '{}' } }] })];
  }

  private messageDelta(data: Record<string, unknown>): void {
    if (isRecord(data.delta) && data.delta.stop_reason != null) this.stopReason = data.delta.stop_reason;
    if (!isRecord(data.usage)) return;
    // message_delta counts are cumulative, so they replace rather than add.
    this.outputTokens = numberOr(data.usage.output_tokens, this.outputTokens);
    for (const key of ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens']) {
      if (typeof data.usage[key] === 'number') this.inputUsage[key] = data.usage[key];
    }
  }

  private messageStop(): StreamPiece[] {
    this.finishedFlag = true;
    const finish: FinishReason = toFinishReason(this.stopReason);
    const usageChunk: ChatCompletionChunk = { ...this.envelope(), choices: [], usage: this.usage };
    return [this.piece({}, finish), { data: JSON.stringify(usageChunk), usageOnly: true }];
  }

  private envelope(): Omit<ChatCompletionChunk, 'choices'> {
    return { id: this.id ?? '', object: 'chat.completion.chunk', created: this.ctx.created, model: this.model ?? this.ctx.upstreamModel };
  }

  private piece(delta: Delta, finishReason: FinishReason | null = null, tokens = 0): StreamPiece {
    const chunk: ChatCompletionChunk = { ...this.envelope(), choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }] };
    return { data: JSON.stringify(chunk), tokens };
  }
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** The role chunks message_start made, told apart from every other piece by identity. */
const OPENINGS = new WeakSet<StreamPiece>();

/**
 * Runs the translator over the upstream's events; ending without message_stop is a truncation.
 *
 * The role chunk that message_start makes is held until something follows it in the stream: the
 * pipeline commits to a route once the first batch arrives, and Anthropic reports an overload
 * (`overloaded_error`) after message_start as often as before it. Held, such a stream fails before
 * anything reached the caller, so another route can still serve the request.
 */
export async function* translateStream(batches: AsyncIterable<readonly StreamEvent[]>, translator: StreamTranslator): AsyncGenerator<StreamPiece[]> {
  let held: StreamPiece[] | null = null;
  let started = false;
  try {
    for await (const events of batches) {
      const pieces: StreamPiece[] = held ?? [];
      held = null;
      let failure: Error | undefined;
      for (const event of events) {
        // After message_stop the body is read to its end rather than dropped, so that the
        // keep-alive connection goes back to the pool instead of being torn down.
        if (translator.finished) break;
        try {
          for (const piece of translator.handle(event)) pieces.push(piece);
        } catch (err) {
          // What came before the error in this read is still delivered, then the error.
          failure = err instanceof Error ? err : new Error(String(err));
          break;
        }
      }
      if (failure !== undefined) {
        // What came before the error is delivered, unless it is only the held role chunk: then
        // nothing has started, and the error alone decides (a failover, while it is the first).
        if (started && pieces.length > 0) yield pieces;
        throw failure;
      }
      if (pieces.length === 0) continue;
      if (!started && !translator.finished && pieces.every((piece) => OPENINGS.has(piece))) {
        held = pieces;
        continue;
      }
      started = true;
      yield pieces;
    }
  } catch (err) {
    // The caller already has the whole answer; a fault in the trailing bytes changes nothing.
    if (translator.finished) return;
    throw err;
  }
  if (!translator.finished) {
    throw new GatewayError('upstream_stream_truncated', 'The upstream provider ended the stream before message_stop.');
  }
  if (held !== null) yield held;
}

/**
 * Anthropic deltas carry several tokens each. About four characters a token for ASCII text, and
 * one a character beyond it (CJK and other scripts take about one token each or more), at least one.
 */
function textTokens(text: string): number {
  let ascii = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 128) ascii++;
  return Math.max(1, Math.ceil(ascii / 4) + (text.length - ascii));
}
