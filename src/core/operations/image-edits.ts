/**
 * POST /v1/images/edits as a unary operation: a picture (and optionally its mask) received as
 * multipart parts, edited by the adapter as the prompt says, answered as a generation is
 * (images.ts): inline or as assets, charged per image, counted against the `images` daily cap.
 */
import { GatewayError } from '../../errors/index.js';
import type { Assets } from '../../assets/assets.js';
import type { Files } from '../../uploads/files.js';
import type { ImagesRequest } from '../../protocol/images.js';
import type { InputFile } from '../../providers/types.js';
import { validateImageEditFields } from '../../validation/image-edit-request.js';
import { typeName } from '../../validation/ajv-errors.js';
import type { UnaryOperation } from '../unary-service.js';
import { inputFileOf } from './form-input.js';
import { imagesAnswer } from './images.js';

export interface ImageEditInput {
  readonly model: string;
  readonly request: ImagesRequest;
  readonly image: InputFile;
  readonly mask: InputFile | undefined;
}

export function imageEditOperation(assets: Assets, files: Files): UnaryOperation<ImageEditInput> {
  return {
    modality: 'images',
    sizeParam: 'prompt',
    async validate(body, principal) {
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new GatewayError('invalid_parameter', `The request must be a multipart form, got ${typeName(body)}.`, { param: null });
      }
      const fields = body as Record<string, unknown>;
      const request = validateImageEditFields(fields);
      // Parts only: OpenAI's edits take the picture itself, not an upload's id.
      const image = await inputFileOf(fields, 'image', 'image_file_id', files, principal);
      if (image === undefined) throw new GatewayError('missing_required_parameter', 'Send the picture to edit in the multipart field "image".', { param: 'image' });
      const mask = await inputFileOf(fields, 'mask', 'mask_file_id', files, principal);
      return { model: request.model, request, image, mask };
    },
    needs: () => [{ capability: 'image_generation', param: 'model' }],
    bound: (input) => ({ prompt: 0, output: 0, units: input.request.n ?? 1 }),
    async call(adapter, input, route) {
      if (adapter.imageEdit === undefined) throw new GatewayError('capability_not_implemented', `Provider "${adapter.id}" does not implement image editing.`);
      const call = { request: input.request, image: input.image, upstreamModel: route.upstreamModel, signal: route.signal, requestId: route.requestId };
      const { images } = await adapter.imageEdit(input.mask === undefined ? call : { ...call, mask: input.mask });
      return imagesAnswer(adapter.id, images, input.request, route, assets);
    },
  };
}
