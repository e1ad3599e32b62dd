/** Validation of an image-generation request body (POST /v1/images/generations), OpenAI's fields and ranges. */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_IMAGES_PER_REQUEST, type ImagesRequest } from '../protocol/images.js';
import { GatewayError } from '../errors/index.js';
import { ajv } from './ajv.js';
import { ajvErrorToGatewayError, typeName } from './ajv-errors.js';
import { StringEnum } from './schema-helpers.js';

const ImagesRequestSchema = Type.Object({
  model: Type.String({ minLength: 1 }),
  prompt: Type.String({ minLength: 1, maxLength: 32_000 }),
  n: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_IMAGES_PER_REQUEST })),
  size: Type.Optional(Type.String({ pattern: '^(auto|[1-9][0-9]{1,3}x[1-9][0-9]{1,3})$', expected: 'a size such as "1024x1024", or "auto"' })),
  response_format: Type.Optional(StringEnum(['url', 'b64_json'])),
  quality: Type.Optional(Type.String()),
  style: Type.Optional(Type.String()),
  user: Type.Optional(Type.String()),
});

const validateShape = ajv.compile<Static<typeof ImagesRequestSchema>>(ImagesRequestSchema);

export function validateImagesRequest(body: unknown): ImagesRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatewayError('invalid_parameter', `The request body must be a JSON object, got ${typeName(body)}.`, { param: null });
  }
  if (!validateShape(body)) throw ajvErrorToGatewayError(validateShape, body);
  // OpenAI's streamed partial images are events this endpoint does not relay: refused rather than
  // answered with one JSON body the caller's event reader cannot read.
  if ((body as { stream?: unknown }).stream === true || (body as { stream?: unknown }).stream === 'true') {
    throw new GatewayError('invalid_parameter', 'Streamed image generation is not supported; leave stream out or false.', { param: 'stream' });
  }
  return body;
}
