/**
 * Embeddings over OpenAI's wire format (POST {base}/embeddings). The caller's body goes upstream
 * with only `model` replaced, so `encoding_format`, `dimensions` and newer fields reach the server
 * as sent, and the answer comes back as received; it is parsed only to check its shape and read
 * its usage.
 */
import type { EmbeddingsCall, EmbeddingsResult } from '../types.js';
import { errorDetail, malformed, reportedError } from './errors.js';

export const EMBEDDINGS_PATH = '/embeddings';

export function embeddingsBody(call: EmbeddingsCall): string {
  return JSON.stringify({ ...call.request, model: call.upstreamModel });
}

export function embeddingsResult(providerId: string, apiKey: string | undefined, text: string, inputs: number): EmbeddingsResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw malformed(providerId, 'embeddings that are not valid JSON', err);
  }
  if (typeof parsed !== 'object' || parsed === null) throw malformed(providerId, 'embeddings that are not a JSON object');
  const body = parsed as { data?: unknown; usage?: { prompt_tokens?: unknown } };
  if (!Array.isArray(body.data)) {
    if ('error' in body) throw reportedError(providerId, apiKey, errorDetail(body));
    throw malformed(providerId, 'embeddings without a data array');
  }
  if (body.data.length !== inputs) throw malformed(providerId, `${body.data.length} embeddings for ${inputs} inputs`);
  const prompt = body.usage?.prompt_tokens;
  return { vectors: [], promptTokens: typeof prompt === 'number' && Number.isInteger(prompt) && prompt >= 0 ? prompt : null, rawJson: text };
}
