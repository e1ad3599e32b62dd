/** POST /v1/embeddings as a unary operation: OpenAI's request and response, any adapter that implements embeddings. */
import { GatewayError } from '../../errors/index.js';
import type { EmbeddingsRequest, EmbeddingsResponse } from '../../protocol/embeddings.js';
import { embeddingsTokenBound, estimateEmbeddingsTokens, vectorToBase64 } from '../../protocol/embeddings-tokens.js';
import { validateEmbeddingsRequest } from '../../validation/embeddings-request.js';
import type { UnaryOperation } from '../unary-service.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export const embeddingsOperation: UnaryOperation<EmbeddingsRequest> = {
  modality: 'embeddings',
  sizeParam: 'input',
  validate: validateEmbeddingsRequest,
  needs: () => [{ capability: 'embeddings', param: 'model' }],
  bound: (request) => ({ prompt: embeddingsTokenBound(request.input), output: 0 }),
  async call(adapter, request, route) {
    // The router only plans routes whose adapter implements embeddings; this guards the contract.
    if (adapter.embeddings === undefined) throw new GatewayError('capability_not_implemented', `Provider "${adapter.id}" does not implement embeddings.`);
    const result = await adapter.embeddings({ request, upstreamModel: route.upstreamModel, signal: route.signal, requestId: route.requestId });
    const promptTokens = result.promptTokens ?? estimateEmbeddingsTokens(request.input);
    const body = result.rawJson ?? JSON.stringify(toResponse(result.vectors, request, route.upstreamModel, promptTokens));
    return { body, contentType: JSON_TYPE, promptTokens, completionTokens: 0 };
  },
};

function toResponse(vectors: ReadonlyArray<ArrayLike<number>>, request: EmbeddingsRequest, model: string, promptTokens: number): EmbeddingsResponse {
  const base64 = request.encoding_format === 'base64';
  return {
    object: 'list',
    data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: base64 ? vectorToBase64(vector) : Array.from(vector) })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}
