import { describe, it, expect } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import type { EmbeddingsRequest } from '../../protocol/embeddings.js';
import { MAX_BATCH_INPUTS, readVectors, toEmbedCalls, type EmbedCall } from './embeddings.js';

const CTX = { providerId: 'gemini-test', apiKey: 'AIza-secret' };
const MODEL = 'models/gemini-embedding-001';

function request(input: EmbeddingsRequest['input'], extra: Partial<EmbeddingsRequest> = {}): EmbeddingsRequest {
  return { model: 'public-embed', input, ...extra };
}

function thrown(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected a GatewayError');
}

describe('toEmbedCalls', () => {
  it('embeds one input with embedContent, one input in an array too', () => {
    const expected = [{ method: 'embedContent', body: { content: { parts: [{ text: 'hello' }] } }, count: 1 }];
    expect(toEmbedCalls(request('hello'), MODEL)).toEqual(expected);
    expect(toEmbedCalls(request(['hello']), MODEL)).toEqual(expected);
  });

  it('embeds several with batchEmbedContents, naming the model in each entry, with dimensions', () => {
    expect(toEmbedCalls(request(['a', 'b'], { dimensions: 256 }), MODEL)).toEqual([
      {
        method: 'batchEmbedContents',
        body: {
          requests: [
            { model: MODEL, content: { parts: [{ text: 'a' }] }, outputDimensionality: 256 },
            { model: MODEL, content: { parts: [{ text: 'b' }] }, outputDimensionality: 256 },
          ],
        },
        count: 2,
      },
    ]);
  });

  it('splits long input lists into batches Gemini accepts, in order', () => {
    const texts = Array.from({ length: 2 * MAX_BATCH_INPUTS + 1 }, (_, i) => `t${i}`);
    const calls = toEmbedCalls(request(texts), MODEL);
    expect(calls.map((c) => c.count)).toEqual([100, 100, 1]);
    expect(calls.every((c) => c.method === 'batchEmbedContents')).toBe(true);
    const sent = calls.flatMap((c) => (c.body as { requests: Array<{ content: { parts: Array<{ text: string }> } }> }).requests.map((r) => r.content.parts[0]!.text));
    expect(sent).toEqual(texts);
  });

  it('refuses token arrays with 422 and empty input with 400, naming input', () => {
    for (const tokens of [[1, 2, 3], [[1, 2], [3]]] as EmbeddingsRequest['input'][]) {
      const err = thrown(() => toEmbedCalls(request(tokens), MODEL));
      expect(err.code).toBe('incompatible_parameters');
      expect(err.status).toBe(422);
      expect(err.param).toBe('input');
    }
    const empty = thrown(() => toEmbedCalls(request([]), MODEL));
    expect(empty.code).toBe('invalid_parameter');
    expect(empty.param).toBe('input');
  });
});

describe('readVectors', () => {
  const single: EmbedCall = { method: 'embedContent', body: { content: { parts: [{ text: 'x' }] } }, count: 1 };
  const batch: EmbedCall = { method: 'batchEmbedContents', body: { requests: [] }, count: 2 };

  it('reads one vector or a batch of them', () => {
    expect(readVectors(CTX, '{"embedding":{"values":[0.1,-0.2]}}', single)).toEqual([[0.1, -0.2]]);
    expect(readVectors(CTX, '{"embeddings":[{"values":[1]},{"values":[2]}]}', batch)).toEqual([[1], [2]]);
  });

  it.each([
    ['not json', 'oops', single],
    ['no embedding', '{}', single],
    ['values that are not numbers', '{"embedding":{"values":["1"]}}', single],
    ['empty values', '{"embedding":{"values":[]}}', single],
    ['no embeddings array', '{"embedding":{"values":[1]}}', batch],
    ['fewer vectors than inputs', '{"embeddings":[{"values":[1]}]}', batch],
  ])('rejects %s as malformed', (_label, text, call) => {
    expect(thrown(() => readVectors(CTX, text, call)).code).toBe('upstream_malformed_response');
  });

  it('reports an error body inside a 200 as that error', () => {
    expect(thrown(() => readVectors(CTX, '{"error":{"code":429,"message":"Quota","status":"RESOURCE_EXHAUSTED"}}', single)).code).toBe('upstream_unavailable');
  });
});
