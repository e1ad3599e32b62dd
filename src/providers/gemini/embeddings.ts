/**
 * OpenAI embeddings request → Gemini embedContent (one input) or batchEmbedContents (several),
 * and the vectors back. Gemini takes at most 100 inputs per batch while OpenAI callers may send
 * up to 2048, so a long input list becomes several batches, answered in input order. Gemini
 * reports no token counts for embeddings.
 */
import { GatewayError } from '../../errors/index.js';
import type { EmbeddingsRequest } from '../../protocol/embeddings.js';
import { errorDetail, geminiReportedError, isRecord, malformed, parseJson, type ErrorContext } from './errors.js';
import type { BatchEmbedContentsRequest, EmbedContentRequest } from './wire.js';

/** batchEmbedContents refuses more ("at most 100 requests can be in one batch"). */
export const MAX_BATCH_INPUTS = 100;

export interface EmbedCall {
  readonly method: 'embedContent' | 'batchEmbedContents';
  readonly body: EmbedContentRequest | BatchEmbedContentsRequest;
  /** Vectors the answer must hold. */
  readonly count: number;
}

/** `modelName` is the resource name (`models/…`) that each batch entry must repeat. */
export function toEmbedCalls(request: EmbeddingsRequest, modelName: string): EmbedCall[] {
  const texts = inputTexts(request.input);
  const dims = request.dimensions;
  const entry = (text: string, model?: string): EmbedContentRequest => {
    const out: EmbedContentRequest = { content: { parts: [{ text }] } };
    if (model !== undefined) out.model = model;
    if (dims != null) out.outputDimensionality = dims;
    return out;
  };
  if (texts.length === 1) return [{ method: 'embedContent', body: entry(texts[0] as string), count: 1 }];
  const calls: EmbedCall[] = [];
  for (let i = 0; i < texts.length; i += MAX_BATCH_INPUTS) {
    const slice = texts.slice(i, i + MAX_BATCH_INPUTS);
    calls.push({ method: 'batchEmbedContents', body: { requests: slice.map((text) => entry(text, modelName)) }, count: slice.length });
  }
  return calls;
}

function inputTexts(input: EmbeddingsRequest['input']): string[] {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0) {
    throw new GatewayError('invalid_parameter', 'input must be a string or a non-empty array of strings.', { param: 'input' });
  }
  if (input.every((item): item is string => typeof item === 'string')) return input;
  // Token ids belong to OpenAI's tokenizers; Gemini embeds text only.
  throw new GatewayError('incompatible_parameters', 'This provider embeds text only; token-array input is not supported.', { param: 'input' });
}

/** The vectors of one answer, checked against the number the call asked for. */
export function readVectors(ctx: ErrorContext, bodyText: string, call: EmbedCall): number[][] {
  const body = parseJson(ctx.providerId, bodyText, 'an embedding answer');
  if (!isRecord(body)) throw malformed(ctx.providerId, 'an embedding answer that is not a JSON object');
  if (body.error !== undefined) throw geminiReportedError(ctx, errorDetail(body));
  if (call.method === 'embedContent') return [values(ctx.providerId, body.embedding)];
  if (!Array.isArray(body.embeddings)) throw malformed(ctx.providerId, 'a batch embedding answer without an embeddings array');
  const embeddings = body.embeddings as unknown[];
  if (embeddings.length !== call.count) {
    throw malformed(ctx.providerId, `${embeddings.length} embeddings for ${call.count} inputs`);
  }
  return embeddings.map((embedding) => values(ctx.providerId, embedding));
}

function values(providerId: string, embedding: unknown): number[] {
  if (!isRecord(embedding) || !Array.isArray(embedding.values)) throw malformed(providerId, 'an embedding without values');
  const vector = embedding.values as unknown[];
  if (vector.length === 0 || !vector.every((v) => typeof v === 'number' && Number.isFinite(v))) {
    throw malformed(providerId, 'an embedding whose values are not numbers');
  }
  return vector as number[];
}
