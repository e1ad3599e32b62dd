/**
 * POST /v1/videos as a unary operation: the upstream accepts a job, Tollgate records it and
 * answers at once with the job (`queued`); the poller does the rest. Charged per video second
 * when the job is accepted; refunded if it fails or is cancelled (see src/videos). The video daily
 * cap counts the creation.
 */
import { GatewayError } from '../../errors/index.js';
import type { Files } from '../../uploads/files.js';
import type { InputFile } from '../../providers/types.js';
import { costMicros } from '../../billing/pricing.js';
import { validateVideoFields, type ValidVideoRequest } from '../../validation/video-request.js';
import { typeName } from '../../validation/ajv-errors.js';
import type { VideoJobs } from '../../videos/video-jobs.js';
import { videoView } from '../../videos/video-view.js';
import type { UnaryOperation } from '../unary-service.js';
import { inputFileOf, isFormPart } from './form-input.js';

export interface VideoInput {
  readonly model: string;
  readonly request: ValidVideoRequest;
  readonly reference?: InputFile;
}

export function videosOperation(jobs: VideoJobs, files: Files): UnaryOperation<VideoInput> {
  return {
    modality: 'video',
    sizeParam: 'prompt',
    async validate(body, principal) {
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new GatewayError('invalid_parameter', `The request body must be a JSON object or a multipart form, got ${typeName(body)}.`, { param: null });
      }
      const fields = { ...(body as Record<string, unknown>) };
      // JSON callers write {"input_reference": {"file_id": …}}; the SDK's form says input_reference[file_id].
      const nested = fields.input_reference;
      if (typeof nested === 'object' && nested !== null && !isFormPart(nested)) {
        // An empty object or a list would otherwise name no reference and be dropped silently.
        if (Array.isArray(nested) || Object.keys(nested).length === 0) {
          throw new GatewayError('invalid_parameter', 'input_reference must be {"file_id": "file-…"} (an uploaded file), or the file itself sent as multipart/form-data.', { param: 'input_reference' });
        }
        delete fields.input_reference;
        for (const [key, value] of Object.entries(nested)) fields[`input_reference[${key}]`] = value;
      }
      const request = validateVideoFields(fields);
      const reference = await inputFileOf(fields, 'input_reference', 'input_reference[file_id]', files, principal);
      return { model: request.model, request, ...(reference === undefined ? {} : { reference }) };
    },
    needs: () => [{ capability: 'video', param: 'model' }],
    bound: (input) => ({ prompt: 0, output: 0, units: input.request.secondsCount }),
    async call(adapter, input, route) {
      if (adapter.videos === undefined) throw new GatewayError('capability_not_implemented', `Provider "${adapter.id}" does not implement video generation.`);
      const { secondsCount: _count, ...request } = input.request;
      const upstream = await adapter.videos.create({
        request,
        ...(input.reference === undefined ? {} : { reference: input.reference }),
        upstreamModel: route.upstreamModel,
        signal: route.signal,
        requestId: route.requestId,
      });
      const job = await jobs.record({
        accountId: route.accountId,
        apiKeyId: route.apiKeyId,
        requestId: route.requestId,
        model: route.model,
        provider: route.provider,
        upstreamModel: route.upstreamModel,
        prompt: request.prompt,
        seconds: input.request.secondsCount,
        size: input.request.size ?? '',
        chargedMicros: costMicros(route.price, 'video', 0, 0, input.request.secondsCount),
        upstream,
      });
      return { body: JSON.stringify(videoView(job, null)), contentType: 'application/json; charset=utf-8', promptTokens: 0, completionTokens: 0, units: input.request.secondsCount };
    },
  };
}
