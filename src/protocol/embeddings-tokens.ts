/**
 * Token arithmetic for embeddings before and without the upstream's count: a bound for rate
 * limits and credit holds (a UTF-8 byte is never less than a token, and a token id is one
 * token), and an estimate for the bill when an upstream reports no usage (about four characters
 * a token, as for chat prompts).
 */
import type { EmbeddingsInput } from './embeddings.js';

function inputs(input: EmbeddingsInput): Array<string | number[]> {
  if (typeof input === 'string') return [input];
  if (input.length > 0 && typeof input[0] === 'number') return [input as number[]];
  return input as Array<string | number[]>;
}

export function embeddingsInputCount(input: EmbeddingsInput): number {
  return inputs(input).length;
}

export function embeddingsTokenBound(input: EmbeddingsInput): number {
  let tokens = 0;
  for (const item of inputs(input)) tokens += typeof item === 'string' ? Buffer.byteLength(item) : item.length;
  return tokens;
}

export function estimateEmbeddingsTokens(input: EmbeddingsInput): number {
  let tokens = 0;
  for (const item of inputs(input)) tokens += typeof item === 'string' ? Math.ceil(item.length / 4) : item.length;
  return tokens;
}

/** OpenAI's base64 encoding of a vector: its float32 values, little-endian, base64. */
export function vectorToBase64(vector: ArrayLike<number>): string {
  const floats = Float32Array.from(vector);
  const bytes = Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
  // Float32Array is in the platform's byte order; swap on a big-endian machine.
  if (new Uint8Array(new Uint16Array([1]).buffer)[0] === 0) bytes.swap32();
  return bytes.toString('base64');
}
