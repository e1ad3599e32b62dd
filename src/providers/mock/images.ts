/**
 * The mock's images: real PNGs of the requested size (1024×1024 for `auto`), each one colour
 * derived from the prompt and the image's index, so the same request makes the same images.
 */
import { createHash } from 'node:crypto';
import { GatewayError } from '../../errors/index.js';
import type { ImagesRequest } from '../../protocol/images.js';
import type { ImagesResult } from '../types.js';
import { solidPng } from './png.js';

const MAX_SIDE = 2048;

export function mockImages(request: ImagesRequest): ImagesResult {
  const [width, height] = request.size === undefined || request.size === 'auto' ? [1024, 1024] : request.size.split('x').map(Number);
  if (width! > MAX_SIDE || height! > MAX_SIDE) {
    throw new GatewayError('upstream_rejected_request', `The mock provider makes images of at most ${MAX_SIDE}×${MAX_SIDE} pixels; size is ${request.size}.`, { param: 'size' });
  }
  const images = Array.from({ length: request.n ?? 1 }, (_, index) => {
    const digest = createHash('sha256').update(`${index}\n${request.prompt}`).digest();
    return { data: solidPng(width!, height!, [digest[0]!, digest[1]!, digest[2]!]), contentType: 'image/png', revisedPrompt: request.prompt };
  });
  return { images };
}
