/**
 * POST /v1/images/generations as a unary operation. Adapters hand back image bytes; the caller
 * gets them as `b64_json`, or (the default) as the `url` of an asset Tollgate stores and serves,
 * never an upstream's short-lived link. Charged per image at the model's `per_image` price; the
 * images daily cap counts the request.
 */
import { GatewayError } from '../../errors/index.js';
import type { ImageObject, ImagesRequest, ImagesResponse } from '../../protocol/images.js';
import { validateImagesRequest } from '../../validation/images-request.js';
import type { Assets } from '../../assets/assets.js';
import type { UnaryOperation } from '../unary-service.js';

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
      if (images.length === 0) throw new GatewayError('upstream_malformed_response', `Provider "${adapter.id}" returned no image.`);
      const data: ImageObject[] = [];
      for (const image of images) {
        const revised = image.revisedPrompt === undefined ? {} : { revised_prompt: image.revisedPrompt };
        if (request.response_format === 'b64_json') {
          data.push({ b64_json: image.data.toString('base64'), ...revised });
        } else {
          const asset = await assets.save(route.accountId, route.requestId, image.data, image.contentType);
          data.push({ url: route.assetUrl(asset.id), ...revised });
        }
      }
      const response: ImagesResponse = { created: Math.floor(Date.now() / 1000), data };
      return { body: JSON.stringify(response), contentType: 'application/json; charset=utf-8', promptTokens: 0, completionTokens: 0, units: images.length };
    },
  };
}
