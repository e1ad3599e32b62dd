/**
 * Gemini GenerateContentResponse → OpenAI chat completion. The upstream body is untrusted input:
 * every field we rely on is checked, and anything off-shape becomes upstream_malformed_response
 * rather than a TypeError deep in the pipeline. Gemini's JSON is proto3 JSON, so zero values
 * (a candidate index of 0, a token count of 0) are simply absent.
 */
import { randomBytes } from 'node:crypto';
import type { ChatCompletion, ChatCompletionChoice, FinishReason, ToolCall, Usage } from '../../protocol/chat.js';
import { errorDetail, geminiReportedError, isRecord, malformed, parseJson, type ErrorContext } from './errors.js';
import { toolCallId } from './tool-call-id.js';
import { GatewayError } from '../../errors/index.js';

export interface ResponseContext extends ErrorContext {
  /** Named as the completion's model: Gemini's own `modelVersion` is a build name, not the configured model. */
  readonly upstreamModel: string;
  readonly created: number;
}

/** A candidate's content in order: text runs (thoughts left out) and function calls. */
export type CandidatePiece =
  | { kind: 'text'; text: string }
  | { kind: 'call'; name: string; args: Record<string, unknown>; thoughtSignature: string | undefined };

/** Gemini gives no completion id; its responseId is unique per answer, else a random one is made. */
export function completionId(responseId: unknown): string {
  return `chatcmpl-${typeof responseId === 'string' && responseId !== '' ? responseId : randomBytes(12).toString('hex')}`;
}

/**
 * Reasons Gemini gives when the model tried to call a function and failed: the answer it meant to
 * give is not there (usually no content at all). Shown as a normal stop, an agent would read
 * "finished, with nothing to say". It is this generation failing, usually over the prompt or the
 * tools' schemas, not the route: it is neither failed over nor counted against the route's
 * breaker (one caller's prompt could otherwise open it for everyone), and a resend may succeed.
 */
const FAILED_CALL_REASONS = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS']);

/** Throws for a candidate that ended in a failed function call without making one. */
export function checkFailedCall(providerId: string, reason: unknown, calledTools: boolean): void {
  if (calledTools || typeof reason !== 'string' || !FAILED_CALL_REASONS.has(reason)) return;
  throw new GatewayError('upstream_generation_failed', `Provider "${providerId}" ended the answer with ${reason}: the model's function call failed, so there is no answer to relay.`);
}

/**
 * Gemini ends with STOP even when it calls functions, so calls decide "tool_calls"; the reasons
 * that withhold content are content filters; the rest (newer ones too) are a normal stop.
 */
export function toFinishReason(reason: unknown, calledTools: boolean): FinishReason {
  switch (reason) {
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
    case 'IMAGE_PROHIBITED_CONTENT':
    case 'IMAGE_RECITATION':
      return 'content_filter';
    default:
      return calledTools ? 'tool_calls' : 'stop';
  }
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

const COUNT_FIELDS = ['promptTokenCount', 'candidatesTokenCount', 'thoughtsTokenCount', 'toolUsePromptTokenCount', 'totalTokenCount'];

/**
 * Thinking tokens are output the caller pays for, so they count as completion tokens, as
 * OpenAI counts reasoning tokens. Null when the metadata has no counts at all (Gemini sends
 * count-less metadata on some stream chunks).
 */
export function toUsage(meta: unknown): Usage | null {
  if (!isRecord(meta) || !COUNT_FIELDS.some((field) => typeof meta[field] === 'number')) return null;
  const prompt = count(meta.promptTokenCount) + count(meta.toolUsePromptTokenCount);
  const thoughts = count(meta.thoughtsTokenCount);
  const completion = count(meta.candidatesTokenCount) + thoughts;
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  const cached = count(meta.cachedContentTokenCount);
  if (cached > 0) usage.prompt_tokens_details = { cached_tokens: cached };
  if (thoughts > 0) usage.completion_tokens_details = { reasoning_tokens: thoughts };
  return usage;
}

/**
 * The candidates' choice indexes. proto3 JSON leaves a zero out, so an absent index is 0, not the
 * candidate's position; two candidates claiming one index would merge two answers into one choice.
 */
export function candidateIndexes(providerId: string, candidates: readonly Record<string, unknown>[]): number[] {
  const indexes = candidates.map((c) => {
    if (c.index === undefined) return 0;
    if (typeof c.index !== 'number' || !Number.isInteger(c.index) || c.index < 0) throw malformed(providerId, 'a candidate with an invalid index');
    return c.index;
  });
  if (new Set(indexes).size !== indexes.length) throw malformed(providerId, 'two candidates with the same index');
  return indexes;
}

/** Every candidate must be an object before anything else is read. */
export function candidateList(providerId: string, candidates: unknown): Record<string, unknown>[] {
  if (candidates === undefined) return [];
  if (!Array.isArray(candidates)) throw malformed(providerId, 'candidates that are not an array');
  return (candidates as unknown[]).map((c) => {
    if (!isRecord(c)) throw malformed(providerId, 'a candidate that is not an object');
    return c;
  });
}

/** Reads a candidate's parts; content is absent when a filter withheld it. */
export function candidatePieces(providerId: string, candidate: Record<string, unknown>): CandidatePiece[] {
  if (candidate.content === undefined) return [];
  if (!isRecord(candidate.content)) throw malformed(providerId, 'a candidate whose content is not an object');
  const parts = candidate.content.parts;
  if (parts === undefined) return [];
  if (!Array.isArray(parts)) throw malformed(providerId, 'a candidate whose parts are not an array');
  const pieces: CandidatePiece[] = [];
  for (const part of parts as unknown[]) {
    if (!isRecord(part)) throw malformed(providerId, 'a content part that is not an object');
    if (part.functionCall !== undefined) {
      const call = part.functionCall;
      if (!isRecord(call) || typeof call.name !== 'string' || call.name === '') throw malformed(providerId, 'a function call without a name');
      if (call.args !== undefined && call.args !== null && !isRecord(call.args)) throw malformed(providerId, 'a function call whose args are not an object');
      const signature = typeof part.thoughtSignature === 'string' && part.thoughtSignature !== '' ? part.thoughtSignature : undefined;
      pieces.push({ kind: 'call', name: call.name, args: isRecord(call.args) ? call.args : {}, thoughtSignature: signature });
    } else if (part.text !== undefined) {
      if (typeof part.text !== 'string') throw malformed(providerId, 'a text part whose text is not a string');
      // Thought summaries are the model's reasoning, not its answer.
      if (part.thought === true || part.text === '') continue;
      const last = pieces[pieces.length - 1];
      if (last?.kind === 'text') last.text += part.text;
      else pieces.push({ kind: 'text', text: part.text });
    }
    // Other parts (inline media, executable code and its results) have no chat-completion counterpart.
  }
  return pieces;
}

export function toToolCall(piece: Extract<CandidatePiece, { kind: 'call' }>): ToolCall {
  return { id: toolCallId(piece.thoughtSignature), type: 'function', function: { name: piece.name, arguments: JSON.stringify(piece.args) } };
}

/** A prompt Gemini refused to answer comes back as a 200 with a block reason and no candidates. */
export function promptBlocked(body: Record<string, unknown>): boolean {
  return isRecord(body.promptFeedback) && typeof body.promptFeedback.blockReason === 'string' && body.promptFeedback.blockReason !== '';
}

export function toChatCompletion(bodyText: string, ctx: ResponseContext): ChatCompletion {
  const body = parseJson(ctx.providerId, bodyText, 'a completion');
  if (!isRecord(body)) throw malformed(ctx.providerId, 'a completion that is not a JSON object');
  if (body.error !== undefined) throw geminiReportedError(ctx, errorDetail(body));
  const candidates = candidateList(ctx.providerId, body.candidates);

  let choices: ChatCompletionChoice[];
  if (candidates.length === 0) {
    if (!promptBlocked(body)) throw malformed(ctx.providerId, 'a completion without candidates');
    choices = [{ index: 0, message: { role: 'assistant', content: null, refusal: null }, finish_reason: 'content_filter', logprobs: null }];
  } else {
    const indexes = candidateIndexes(ctx.providerId, candidates);
    choices = candidates.map((candidate, i) => toChoice(ctx.providerId, candidate, indexes[i] as number));
    choices.sort((a, b) => a.index - b.index);
  }

  const completion: ChatCompletion = { id: completionId(body.responseId), object: 'chat.completion', created: ctx.created, model: ctx.upstreamModel, choices };
  const usage = toUsage(body.usageMetadata);
  if (usage !== null) completion.usage = usage;
  return completion;
}

function toChoice(providerId: string, candidate: Record<string, unknown>, index: number): ChatCompletionChoice {
  const pieces = candidatePieces(providerId, candidate);
  const texts = pieces.flatMap((p) => (p.kind === 'text' ? [p.text] : []));
  const toolCalls = pieces.flatMap((p) => (p.kind === 'call' ? [toToolCall(p)] : []));
  const message: ChatCompletionChoice['message'] = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null, refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  checkFailedCall(providerId, candidate.finishReason, toolCalls.length > 0);
  return { index, message, finish_reason: toFinishReason(candidate.finishReason, toolCalls.length > 0), logprobs: null };
}
