/**
 * OpenAI's embeddings endpoint for the fake server: `{"object":"list","data":[{"object":"embedding",
 * "index","embedding"}],"model","usage":{"prompt_tokens","total_tokens"}}`, vectors as float arrays
 * or, with `encoding_format: "base64"`, little-endian float32 bytes in base64. A vector's values
 * are its input's index and position (`index + position / 100`), so tests can check the order;
 * one prompt token per word (or per token id).
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- request bodies are whatever the client sent.
type Json = Record<string, any>;

export const FAKE_EMBEDDING_DIMENSIONS = 8;

export type EmbeddingsAnswer = { status: number; body: Json | string };

export function fakeEmbeddings(body: Json): EmbeddingsAnswer {
  const input: unknown = body.input;
  const items: unknown[] = typeof input === 'string' ? [input] : Array.isArray(input) && typeof input[0] === 'number' ? [input] : Array.isArray(input) ? input : [];
  if (items.length === 0) return invalid("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", 'input');
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : FAKE_EMBEDDING_DIMENSIONS;
  const base64 = body.encoding_format === 'base64';
  let tokens = 0;
  const data = items.map((item, index) => {
    tokens += typeof item === 'string' ? item.split(/\s+/).filter(Boolean).length : Array.isArray(item) ? item.length : 0;
    const vector = Array.from({ length: dimensions }, (_, position) => index + position / 100);
    return { object: 'embedding', index, embedding: base64 ? Buffer.from(Float32Array.from(vector).buffer).toString('base64') : vector };
  });
  return { status: 200, body: { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } } };
}

function invalid(message: string, param: string): EmbeddingsAnswer {
  return { status: 400, body: { error: { message, type: 'invalid_request_error', param, code: null } } };
}
