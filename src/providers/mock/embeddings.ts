/**
 * The mock's embeddings: deterministic unit vectors derived from each input's SHA-256, so that the
 * same text always gets the same vector and different texts differ. 64 dimensions unless the
 * caller asks for another number (at most MAX_DIMENSIONS).
 */
import { createHash } from 'node:crypto';
import { GatewayError } from '../../errors/index.js';
import type { EmbeddingsInput } from '../../protocol/embeddings.js';

export const DEFAULT_DIMENSIONS = 64;
export const MAX_DIMENSIONS = 4096;

function items(input: EmbeddingsInput): string[] {
  if (typeof input === 'string') return [input];
  if (input.length > 0 && typeof input[0] === 'number') return [JSON.stringify(input)];
  return (input as Array<string | number[]>).map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
}

function vectorOf(text: string, dimensions: number): Float64Array {
  const vector = new Float64Array(dimensions);
  let block = createHash('sha256').update(text).digest();
  for (let i = 0; i < dimensions; i++) {
    if (i > 0 && i % 16 === 0) block = createHash('sha256').update(block).digest();
    vector[i] = block.readInt16LE((i % 16) * 2) / 32768;
  }
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dimensions; i++) vector[i] = vector[i]! / norm;
  return vector;
}

export function mockEmbeddings(input: EmbeddingsInput, dimensions: number | undefined): Float64Array[] {
  const size = dimensions ?? DEFAULT_DIMENSIONS;
  if (size > MAX_DIMENSIONS) {
    throw new GatewayError('upstream_rejected_request', `The mock provider makes at most ${MAX_DIMENSIONS} dimensions; dimensions is ${size}.`, { param: 'dimensions' });
  }
  return items(input).map((text) => vectorOf(text, size));
}
