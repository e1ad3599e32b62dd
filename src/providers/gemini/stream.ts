/**
 * Gemini's streamed GenerateContentResponses → OpenAI `chat.completion.chunk`s. With `alt=sse`
 * every event is a whole GenerateContentResponse holding the next slice of each candidate; there
 * is no closing event: a candidate is done when it names a finishReason, and the stream when the
 * body ends. Function calls arrive whole, so each becomes one complete tool_call delta. The
 * translator is a state machine over events, kept apart from the transport so it can be tested
 * event by event.
 */
import { GatewayError } from '../../errors/index.js';
import type { ChatCompletionChunk, FinishReason, Usage } from '../../protocol/chat.js';
import type { StreamPiece } from '../types.js';
import type { SseEvent } from '../upstream/sse.js';
import { errorDetail, geminiReportedError, isRecord, malformed, parseJson } from './errors.js';
import {
  checkFailedCall,
  candidateIndexes,
  candidateList,
  candidatePieces,
  completionId,
  promptBlocked,
  toFinishReason,
  toToolCall,
  toUsage,
  type ResponseContext,
} from './response.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

export class StreamTranslator {
  private id: string | undefined;
  /** Choice indexes that have sent their role chunk, and those that have finished. */
  private readonly started = new Set<number>();
  private readonly ended = new Set<number>();
  /** Tool calls so far per choice: OpenAI numbers them within a choice. */
  private readonly toolCalls = new Map<number, number>();
  private lastUsage: Usage | null = null;

  constructor(private readonly ctx: ResponseContext) {}

  /** True once every choice that started has named its finish reason. */
  get finished(): boolean {
    if (this.started.size === 0) return false;
    for (const index of this.started) if (!this.ended.has(index)) return false;
    return true;
  }

  /** Usage as last reported (counts are cumulative), so that a cut stream still accounts for what was produced. */
  get usage(): Usage | null {
    return this.lastUsage;
  }

  /** The pieces to send for one upstream event; throws a GatewayError for an error event or a malformed one. */
  handle(data: string): StreamPiece[] {
    // Gemini sends no [DONE], but a proxy in between might; it carries nothing either way.
    if (data.trim() === '' || data === '[DONE]') return [];
    const body = parseJson(this.ctx.providerId, data, 'a stream chunk');
    if (!isRecord(body)) throw malformed(this.ctx.providerId, 'a stream chunk that is not a JSON object');
    if (body.error !== undefined) throw geminiReportedError(this.ctx, errorDetail(body));
    const candidates = candidateList(this.ctx.providerId, body.candidates);
    const indexes = candidateIndexes(this.ctx.providerId, candidates);
    this.id ??= completionId(body.responseId);
    const usage = toUsage(body.usageMetadata);
    if (usage !== null) this.lastUsage = usage;

    const pieces: StreamPiece[] = [];
    if (candidates.length === 0) {
      // A refused prompt: no candidate will ever come, so the one choice ends filtered.
      if (promptBlocked(body) && !this.started.has(0)) {
        this.start(0, pieces);
        this.end(0, 'content_filter', pieces);
      }
      return pieces;
    }
    candidates.forEach((candidate, i) => this.candidate(candidate, indexes[i] as number, pieces));
    return pieces;
  }

  /** The usage-only chunk that closes a properly ended stream. */
  usagePiece(): StreamPiece {
    const chunk: ChatCompletionChunk = { ...this.envelope(), choices: [], usage: this.lastUsage };
    return { data: JSON.stringify(chunk), usageOnly: true };
  }

  private candidate(candidate: Record<string, unknown>, index: number, pieces: StreamPiece[]): void {
    // Nothing a choice sends after its finish reason is relayed: the caller has seen it end.
    if (this.ended.has(index)) return;
    this.start(index, pieces);
    for (const piece of candidatePieces(this.ctx.providerId, candidate)) {
      if (piece.kind === 'text') {
        pieces.push(this.piece(index, { content: piece.text }, null, textTokens(piece.text)));
      } else {
        const toolIndex = this.toolCalls.get(index) ?? 0;
        this.toolCalls.set(index, toolIndex + 1);
        const call = toToolCall(piece);
        pieces.push(this.piece(index, { tool_calls: [{ index: toolIndex, ...call }] }, null, textTokens(call.function.arguments)));
      }
    }
    const reason = candidate.finishReason;
    if (typeof reason === 'string' && reason !== '' && reason !== 'FINISH_REASON_UNSPECIFIED') {
      checkFailedCall(this.ctx.providerId, reason, (this.toolCalls.get(index) ?? 0) > 0);
      this.end(index, toFinishReason(reason, (this.toolCalls.get(index) ?? 0) > 0), pieces);
    }
  }

  private start(index: number, pieces: StreamPiece[]): void {
    if (this.started.has(index)) return;
    this.started.add(index);
    pieces.push(this.piece(index, { role: 'assistant', content: '' }));
  }

  private end(index: number, reason: FinishReason, pieces: StreamPiece[]): void {
    this.ended.add(index);
    pieces.push(this.piece(index, {}, reason));
  }

  private envelope(): Omit<ChatCompletionChunk, 'choices'> {
    this.id ??= completionId(undefined);
    return { id: this.id, object: 'chat.completion.chunk', created: this.ctx.created, model: this.ctx.upstreamModel };
  }

  private piece(index: number, delta: Delta, finishReason: FinishReason | null = null, tokens = 0): StreamPiece {
    const chunk: ChatCompletionChunk = { ...this.envelope(), choices: [{ index, delta, finish_reason: finishReason, logprobs: null }] };
    return { data: JSON.stringify(chunk), tokens };
  }
}

/**
 * Runs the translator over the upstream's events, one batch per read. The body is read to its
 * end even after every choice finished, since the closing usage may still follow and a drained
 * keep-alive connection goes back to the pool. Ending with a choice unfinished is a truncation.
 */
export async function* translateStream(batches: AsyncIterable<readonly SseEvent[]>, translator: StreamTranslator): AsyncGenerator<StreamPiece[]> {
  try {
    for await (const events of batches) {
      const pieces: StreamPiece[] = [];
      let failure: Error | undefined;
      for (const event of events) {
        try {
          for (const piece of translator.handle(event.data)) pieces.push(piece);
        } catch (err) {
          // What came before the error in this read is still delivered, then the error.
          failure = err instanceof Error ? err : new Error(String(err));
          break;
        }
      }
      if (pieces.length > 0) yield pieces;
      if (failure !== undefined) throw failure;
    }
  } catch (err) {
    // Every choice already ended: a fault in the trailing bytes changes nothing for the caller.
    if (!translator.finished) throw err;
  }
  if (!translator.finished) {
    throw new GatewayError('upstream_stream_truncated', 'The upstream provider ended the stream before every choice had a finish reason.');
  }
  yield [translator.usagePiece()];
}

/**
 * Gemini chunks carry several tokens each. About four characters a token for ASCII text, and
 * one a character beyond it (CJK and other scripts take about one token each or more), at least one.
 */
function textTokens(text: string): number {
  let ascii = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 128) ascii++;
  return Math.max(1, Math.ceil(ascii / 4) + (text.length - ascii));
}
