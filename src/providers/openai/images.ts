/**
 * Image generation over OpenAI's wire format (POST {base}/images/generations). The caller's
 * `response_format` is the gateway's business (it serves `url` from its own assets), so it is not
 * sent: the upstream answers in its default, `b64_json` (gpt-image models) or a short-lived `url`
 * (DALL·E), which is downloaded here, at most MAX_IMAGE_BYTES.
 */
import type { CancelSignal } from '../../util/cancellation.js';
import type { GeneratedImage, ImagesCall } from '../types.js';
import { upstreamFault } from '../upstream/upstream-faults.js';
import { rasterTypeOf } from '../raster-type.js';
import { errorDetail, malformed, reportedError } from './errors.js';

export const IMAGES_PATH = '/images/generations';
const MAX_IMAGE_BYTES = 50 * 1024 * 1024;

export function imagesBody(call: ImagesCall): string {
  const { response_format: _ignored, ...rest } = call.request;
  return JSON.stringify({ ...rest, model: call.upstreamModel });
}

interface UpstreamImage {
  b64_json?: unknown;
  url?: unknown;
  revised_prompt?: unknown;
}

export async function imagesResult(providerId: string, apiKey: string | undefined, text: string, signal: CancelSignal): Promise<GeneratedImage[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw malformed(providerId, 'images that are not valid JSON', err);
  }
  const body = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { data?: unknown };
  if (!Array.isArray(body.data) || body.data.length === 0) {
    if ('error' in body) throw reportedError(providerId, apiKey, errorDetail(body));
    throw malformed(providerId, 'an image answer without a data array');
  }
  const images: GeneratedImage[] = [];
  for (const item of body.data as UpstreamImage[]) {
    const revised = typeof item.revised_prompt === 'string' ? { revisedPrompt: item.revised_prompt } : {};
    // Kept under the type its bytes show, as a downloaded one is: the answer's `output_format` is
    // the upstream's text (a caller's value echoed, by a lax server), not a checked type.
    if (typeof item.b64_json === 'string') images.push({ ...picture(providerId, Buffer.from(item.b64_json, 'base64')), ...revised });
    else if (typeof item.url === 'string') images.push({ ...(await download(providerId, item.url, signal)), ...revised });
    else throw malformed(providerId, 'an image with neither b64_json nor url');
  }
  return images;
}

async function download(providerId: string, url: string, signal: CancelSignal): Promise<{ data: Buffer; contentType: string }> {
  // The upstream names the URL: an inline picture, or one on the web; nothing else fetch can read.
  const inline = /^data:image\/[a-z0-9.+-]+;base64,/i.exec(url);
  if (inline !== null) return picture(providerId, Buffer.from(url.slice(inline[0].length), 'base64'));
  if (!/^https?:\/\//i.test(url)) throw malformed(providerId, 'an image URL that is neither http(s) nor a data: image');
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  signal.once('abort', abort);
  try {
    const res = await fetch(url, { signal: controller.signal });
    if (!res.ok || res.body === null) throw malformed(providerId, `an image URL that answered ${res.status}`);
    const parts: Buffer[] = [];
    let size = 0;
    for await (const part of res.body as AsyncIterable<Uint8Array>) {
      size += part.length;
      if (size > MAX_IMAGE_BYTES) throw malformed(providerId, `an image larger than ${MAX_IMAGE_BYTES} bytes`);
      parts.push(Buffer.from(part));
    }
    return picture(providerId, Buffer.concat(parts));
  } catch (err) {
    if (signal.aborted) throw upstreamFault(signal.reason, signal);
    throw err;
  } finally {
    signal.removeListener('abort', abort);
  }
}

/** Kept under the type its bytes show (whatever the server said), and only if they are a picture. */
function picture(providerId: string, data: Buffer): { data: Buffer; contentType: string } {
  if (data.length > MAX_IMAGE_BYTES) throw malformed(providerId, `an image larger than ${MAX_IMAGE_BYTES} bytes`);
  const contentType = rasterTypeOf(data);
  if (contentType === undefined) throw malformed(providerId, 'an image URL whose content is not a PNG, JPEG, GIF or WebP picture');
  return { data, contentType };
}
