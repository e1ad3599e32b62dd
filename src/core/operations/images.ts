/**
 * POST /v1/images/generations as a unary operation. Adapters hand back image bytes; the caller
 * gets them as `b64_json`, or as the `url` of an asset Tollgate stores and serves, never an
 * upstream's short-lived link. The default is OpenAI's for the model: `b64_json` for the GPT image
 * models, `url` for the others. Charged per image at the model's `per_image` price; the
 * images daily cap counts the request.
 */
import { GatewayError } from '../../errors/index.js';
import type { ImageObject, ImagesRequest, ImagesResponse } from '../../protocol/images.js';
import { validateImagesRequest } from '../../validation/images-request.js';
import type { Assets } from '../../assets/assets.js';
import type { RouteCall, UnaryAnswer, UnaryOperation } from '../unary-service.js';
import type { GeneratedImage } from '../../providers/types.js';

export function imagesOperation(assets: Assets): UnaryOperation<ImagesRequest> {
  return {
    modality: 'images',
    sizeParam: 'prompt',
    validate: validateImagesRequest,
    needs: () => [{ capability: 'image_generation', param: 'model' }],
    bound: (request) => ({ prompt: 0, output: 0, units: request.n ?? 1 }),
    async call(adapter, request, route) {
      if (adapter.images === undefined) throw new GatewayError('capability_not_implemented', `Provider "${adapter.id}" does not implement image generation.`);
      const { images } = await adapter.images({ request, upstreamModel: route.upstreamModel, signal: route.signal, requestId: route.requestId });
      return imagesAnswer(adapter.id, images, request, route, assets);
    },
  };
}

/** Images an adapter made, answered as OpenAI's images response: inline or as assets, charged per image. */
export async function imagesAnswer(providerId: string, images: readonly GeneratedImage[], request: ImagesRequest, route: RouteCall, assets: Assets): Promise<UnaryAnswer> {
  if (images.length === 0) throw new GatewayError('upstream_malformed_response', `Provider "${providerId}" returned no image.`);
  const data: ImageObject[] = [];
  const format = request.response_format ?? defaultFormat(request.model, route.upstreamModel);
  for (const image of images) {
    const revised = image.revisedPrompt === undefined ? {} : { revised_prompt: image.revisedPrompt };
    if (format === 'b64_json') {
      data.push({ b64_json: image.data.toString('base64'), ...revised });
    } else {
      const asset = await assets.save(route.accountId, route.requestId, image.data, image.contentType);
      data.push({ url: route.assetUrl(asset.id), ...revised });
    }
  }
  const response: ImagesResponse = { created: Math.floor(Date.now() / 1000), data };
  return { body: JSON.stringify(response), contentType: 'application/json; charset=utf-8', promptTokens: 0, completionTokens: 0, units: images.length };
}

const GPT_IMAGE = /^(?:gpt-image|chatgpt-image)/i;

/**
 * OpenAI's GPT image models answer only base64, and code written for them reads `b64_json`
 * (`url` is undefined there); DALL·E and the rest answer a URL unless asked. Told by the model's
 * name, the caller's or the upstream's.
 */
function defaultFormat(model: string, upstreamModel: string): 'url' | 'b64_json' {
  return GPT_IMAGE.test(model) || GPT_IMAGE.test(upstreamModel) ? 'b64_json' : 'url';
}
