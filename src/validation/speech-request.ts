/** Validation of a text-to-speech request body (POST /v1/audio/speech), OpenAI's fields and ranges. */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_SPEECH_INPUT_CHARS, SPEECH_FORMATS, type SpeechRequest } from '../protocol/audio.js';
import { GatewayError } from '../errors/index.js';
import { ajv } from './ajv.js';
import { ajvErrorToGatewayError, typeName } from './ajv-errors.js';
import { StringEnum } from './schema-helpers.js';

const SpeechRequestSchema = Type.Object({
  model: Type.String({ minLength: 1 }),
  input: Type.String({ minLength: 1, maxLength: MAX_SPEECH_INPUT_CHARS }),
  voice: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false })]),
  response_format: Type.Optional(StringEnum(SPEECH_FORMATS)),
  speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4 })),
  instructions: Type.Optional(Type.String({ maxLength: MAX_SPEECH_INPUT_CHARS })),
  // Audio only: relayed bytes are charged by their duration, which an SSE stream would not give.
  stream_format: Type.Optional(StringEnum(['audio'])),
});

const validateShape = ajv.compile<Static<typeof SpeechRequestSchema>>(SpeechRequestSchema);

export function validateSpeechRequest(body: unknown): SpeechRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatewayError('invalid_parameter', `The request body must be a JSON object, got ${typeName(body)}.`, { param: null });
  }
  if (!validateShape(body)) throw ajvErrorToGatewayError(validateShape, body);
  return body;
}
