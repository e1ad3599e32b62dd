/**
 * Validation of an embeddings request body (POST /v1/embeddings), OpenAI's limits: `input` is a
 * non-empty string, up to 2048 non-empty strings, one array of token ids, or up to 2048 of them.
 * Unknown fields are kept and relayed to OpenAI-compatible providers.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { EmbeddingsRequest } from '../protocol/embeddings.js';
import { GatewayError } from '../errors/index.js';
import { ajv } from './ajv.js';
import { ajvErrorToGatewayError, typeName } from './ajv-errors.js';
import { StringEnum } from './schema-helpers.js';

export const MAX_EMBEDDING_INPUTS = 2048;

const TokenIds = Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, expected: 'a non-empty array of token ids' });

const EmbeddingsRequestSchema = Type.Object({
  model: Type.String({ minLength: 1 }),
  input: Type.Union(
    [
      Type.String({ minLength: 1 }),
      Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: MAX_EMBEDDING_INPUTS }),
      TokenIds,
      Type.Array(TokenIds, { minItems: 1, maxItems: MAX_EMBEDDING_INPUTS }),
    ],
    { expected: `a non-empty string, an array of 1 to ${MAX_EMBEDDING_INPUTS} non-empty strings, an array of token ids, or an array of 1 to ${MAX_EMBEDDING_INPUTS} such arrays` },
  ),
  dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
  encoding_format: Type.Optional(StringEnum(['float', 'base64'])),
  user: Type.Optional(Type.String()),
});

const validateShape = ajv.compile<Static<typeof EmbeddingsRequestSchema>>(EmbeddingsRequestSchema);

export function validateEmbeddingsRequest(body: unknown): EmbeddingsRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatewayError('invalid_parameter', `The request body must be a JSON object, got ${typeName(body)}.`, { param: null });
  }
  if (!validateShape(body)) throw ajvErrorToGatewayError(validateShape, body);
  return body;
}
