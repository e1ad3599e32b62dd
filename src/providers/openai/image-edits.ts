/**
 * Image editing over OpenAI's wire format (POST {base}/images/edits, multipart): the text fields
 * as the openai SDK sends them, then the picture and its mask. As for generations, the caller's
 * `response_format` is the gateway's business and is not sent; the answer is read by imagesResult.
 */
import type { ImageEditCall } from '../types.js';
import { multipartBody, type FormPart, type MultipartBody } from './multipart-body.js';

export const IMAGE_EDITS_PATH = '/images/edits';

export function imageEditForm(call: ImageEditCall): MultipartBody {
  const { model: _public, response_format: _ours, ...fields } = call.request;
  const parts: FormPart[] = [{ name: 'model', value: call.upstreamModel }];
  // Validated as text or numbers (validation/image-edit-request.ts).
  for (const [name, value] of Object.entries(fields)) if (typeof value === 'string' || typeof value === 'number') parts.push({ name, value: String(value) });
  parts.push({ name: 'image', file: call.image });
  if (call.mask !== undefined) parts.push({ name: 'mask', file: call.mask });
  return multipartBody(parts);
}
