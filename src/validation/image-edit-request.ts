/**
 * Validation of an image edit (POST /v1/images/edits). Its fields arrive as multipart form text,
 * so numbers are read from text; the picture and its mask are resolved by the operation. The
 * fields are OpenAI's; one it does not take is refused rather than ignored.
 */
import { GatewayError } from '../errors/index.js';
import { MAX_IMAGES_PER_REQUEST, type ImagesRequest } from '../protocol/images.js';
import { numberField } from '../core/operations/form-input.js';

/** Text fields passed on as they are, with the longest each may be. */
const PASSED_ON: Readonly<Record<string, number>> = { quality: 32, background: 32, output_format: 16, output_compression: 8, input_fidelity: 16, user: 256 };
const FIELDS = new Set(['model', 'prompt', 'image', 'mask', 'n', 'size', 'response_format', ...Object.keys(PASSED_ON)]);
const SIZE = /^(auto|[1-9][0-9]{1,3}x[1-9][0-9]{1,3})$/;
const MAX_PROMPT_CHARS = 32_000;

export function validateImageEditFields(body: Record<string, unknown>): ImagesRequest {
  for (const name of Object.keys(body)) {
    if (!FIELDS.has(name)) throw new GatewayError('invalid_parameter', `Unknown field ${name.slice(0, 64)}.`, { param: name.slice(0, 64) });
  }
  const model = text(body, 'model', 256);
  if (model === undefined) throw new GatewayError('missing_required_parameter', 'model is required.', { param: 'model' });
  const prompt = text(body, 'prompt', MAX_PROMPT_CHARS);
  if (prompt === undefined) throw new GatewayError('missing_required_parameter', 'prompt is required: say what to change.', { param: 'prompt' });
  const request: ImagesRequest = { model, prompt };
  const n = numberField(body, 'n');
  if (n !== undefined) {
    if (!Number.isInteger(n) || n < 1 || n > MAX_IMAGES_PER_REQUEST) throw new GatewayError('invalid_parameter', `n must be an integer from 1 to ${MAX_IMAGES_PER_REQUEST}, got ${n}.`, { param: 'n' });
    request.n = n;
  }
  const size = text(body, 'size', 16);
  if (size !== undefined) {
    if (!SIZE.test(size)) throw new GatewayError('invalid_parameter', `size must be a size such as "1024x1024", or "auto", got "${size}".`, { param: 'size' });
    request.size = size;
  }
  const format = text(body, 'response_format', 16);
  if (format !== undefined) {
    if (format !== 'url' && format !== 'b64_json') throw new GatewayError('invalid_parameter', `response_format must be "url" or "b64_json", got "${format}".`, { param: 'response_format' });
    request.response_format = format;
  }
  for (const [name, maxLength] of Object.entries(PASSED_ON)) {
    const value = text(body, name, maxLength);
    if (value !== undefined) request[name] = value;
  }
  return request;
}

function text(body: Record<string, unknown>, name: string, maxLength: number): string | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new GatewayError('invalid_parameter', `${name} must be non-empty text${Array.isArray(value) ? ', sent once' : ''}.`, { param: name });
  if (value.length > maxLength) throw new GatewayError('invalid_parameter', `${name} is longer than ${maxLength} characters.`, { param: name });
  return value;
}
