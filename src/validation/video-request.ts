/**
 * Validation of a video creation (POST /v1/videos), sent as JSON or, as the openai SDK sends it,
 * as a multipart form (all fields text). `seconds` is a string on OpenAI's wire; a number is
 * taken too. The reference (`input_reference`) is resolved by the operation.
 */
import { GatewayError } from '../errors/index.js';
import { DEFAULT_VIDEO_SECONDS, DEFAULT_VIDEO_SIZE, MAX_VIDEO_SECONDS, type VideoCreateRequest } from '../protocol/videos.js';

const FIELDS = new Set(['model', 'prompt', 'seconds', 'size', 'input_reference', 'input_reference[file_id]', 'input_reference[image_url]']);
const SIZE = /^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$/;
const MAX_PROMPT_CHARS = 32_000;

export interface ValidVideoRequest extends VideoCreateRequest {
  readonly secondsCount: number;
}

export function validateVideoFields(body: Record<string, unknown>): ValidVideoRequest {
  for (const name of Object.keys(body)) {
    if (!FIELDS.has(name)) throw new GatewayError('invalid_parameter', `Unknown field ${name}.`, { param: name });
  }
  const model = body.model;
  if (model === undefined) throw new GatewayError('missing_required_parameter', 'model is required.', { param: 'model' });
  if (typeof model !== 'string' || model === '') throw new GatewayError('invalid_parameter', 'model must be a non-empty string.', { param: 'model' });
  const prompt = body.prompt;
  if (prompt === undefined) throw new GatewayError('missing_required_parameter', 'prompt is required.', { param: 'prompt' });
  // Without NUL: the job keeps its prompt in the store, and PostgreSQL refuses a NUL in text.
  if (typeof prompt !== 'string' || prompt === '' || prompt.length > MAX_PROMPT_CHARS || prompt.includes('\u0000')) {
    throw new GatewayError('invalid_parameter', `prompt must be a string of 1 to ${MAX_PROMPT_CHARS} characters, without NUL.`, { param: 'prompt' });
  }
  const rawSeconds = body.seconds ?? String(DEFAULT_VIDEO_SECONDS);
  const secondsCount = typeof rawSeconds === 'number' ? rawSeconds : typeof rawSeconds === 'string' && /^\d{1,3}$/.test(rawSeconds) ? Number(rawSeconds) : NaN;
  if (!Number.isInteger(secondsCount) || secondsCount < 1 || secondsCount > MAX_VIDEO_SECONDS) {
    throw new GatewayError('invalid_parameter', `seconds must be a whole number of seconds from 1 to ${MAX_VIDEO_SECONDS} (as OpenAI takes it, a string such as "4"), got ${JSON.stringify(rawSeconds)}.`, { param: 'seconds' });
  }
  const size = body.size ?? DEFAULT_VIDEO_SIZE;
  if (typeof size !== 'string' || !SIZE.test(size)) throw new GatewayError('invalid_parameter', `size must be WIDTHxHEIGHT such as "1280x720", got ${JSON.stringify(size)}.`, { param: 'size' });
  if (body['input_reference[image_url]'] !== undefined) {
    throw new GatewayError('invalid_parameter', 'input_reference by image_url is not supported; upload the image (POST /v1/files) and send its file_id, or send the file itself.', { param: 'input_reference' });
  }
  return { model, prompt, seconds: String(secondsCount), size, secondsCount };
}
