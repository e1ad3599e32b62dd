/** The OpenAI embeddings wire types (POST /v1/embeddings), as callers send and receive them. */

/** One string, several strings, one token array, or several token arrays. */
export type EmbeddingsInput = string | string[] | number[] | number[][];

export interface EmbeddingsRequest {
  model: string;
  input: EmbeddingsInput;
  /** Fewer dimensions than the model's default, for models that can shorten their vectors. */
  dimensions?: number;
  /** `float` (default): arrays of numbers; `base64`: little-endian float32 bytes, base64-encoded. */
  encoding_format?: 'float' | 'base64';
  user?: string;
  [extra: string]: unknown;
}

export interface EmbeddingObject {
  object: 'embedding';
  index: number;
  embedding: number[] | string;
}

export interface EmbeddingsResponse {
  object: 'list';
  data: EmbeddingObject[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}
