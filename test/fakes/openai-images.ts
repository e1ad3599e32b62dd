/**
 * OpenAI's image generation for the fake server: gpt-image models answer `b64_json` (with
 * `output_format`), DALL·E models a short-lived `url`, served by the fake itself at
 * /v1/fake-files/{n}.png. The image is a 1×1 PNG. Edits (multipart) answer as the gpt-image models do.
 */
import { formField, formFile, isFakeForm } from './multipart-form.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- request bodies are whatever the client sent.
type Json = Record<string, any>;

/** A valid 1×1 PNG. */
export const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC', 'base64');
export const FAKE_FILES_PATH = '/v1/fake-files/';

export function fakeImages(body: Json, origin: string): { status: number; body: Json } {
  if (typeof body.prompt !== 'string' || body.prompt === '') {
    return { status: 400, body: { error: { message: "Missing required parameter: 'prompt'.", type: 'invalid_request_error', param: 'prompt', code: 'missing_required_parameter' } } };
  }
  const n = typeof body.n === 'number' ? body.n : 1;
  const byUrl = typeof body.model === 'string' && body.model.startsWith('dall-e');
  const data = Array.from({ length: n }, (_, i) =>
    byUrl ? { url: `${origin}${FAKE_FILES_PATH}${i}.png`, revised_prompt: `A picture of ${body.prompt}` } : { b64_json: TINY_PNG.toString('base64') },
  );
  return { status: 200, body: byUrl ? { created: Math.floor(Date.now() / 1000), data } : { created: Math.floor(Date.now() / 1000), data, output_format: 'png', usage: { input_tokens: 10, output_tokens: 100, total_tokens: 110 } } };
}

/** POST /v1/images/edits (multipart): the edited picture in base64, as the GPT image models answer. */
export function fakeImageEdit(parsed: unknown): { status: number; body: Json } {
  const error = (message: string, param: string) => ({ status: 400, body: { error: { message, type: 'invalid_request_error', param, code: null } } });
  if (!isFakeForm(parsed)) return error("Invalid Content-Type header, expected multipart/form-data.", 'image');
  const image = formFile(parsed, 'image') ?? formFile(parsed, 'image[]');
  if (image === undefined) return error("Missing required parameter: 'image'.", 'image');
  const prompt = formField(parsed, 'prompt');
  if (prompt === undefined || prompt === '') return error("Missing required parameter: 'prompt'.", 'prompt');
  const n = Number(formField(parsed, 'n') ?? '1');
  const data = Array.from({ length: n }, () => ({ b64_json: TINY_PNG.toString('base64') }));
  return { status: 200, body: { created: Math.floor(Date.now() / 1000), data, output_format: 'png', usage: { input_tokens: 20, output_tokens: 100, total_tokens: 120 } } };
}
