/**
 * POST /v1/audio/transcriptions as a unary operation: the audio file (a multipart part already in
 * the blob store, or an earlier upload named by `file_id`) goes to the adapter, its answer back to
 * the caller as it came. Charged per second of audio: the upstream's figure when it gives one,
 * else the file's own (see audio-seconds.ts); and at the token prices when the upstream counts tokens.
 */
import { GatewayError } from '../../errors/index.js';
import type { Files } from '../../uploads/files.js';
import type { TranscriptionRequest } from '../../protocol/audio.js';
import type { InputFile } from '../../providers/types.js';
import { validateTranscriptionFields } from '../../validation/transcription-request.js';
import type { UnaryOperation } from '../unary-service.js';
import { chargedFileSeconds, heldFileSeconds, measuredFileSeconds } from './audio-seconds.js';
import { inputFileOf } from './form-input.js';
import { typeName } from '../../validation/ajv-errors.js';

export interface TranscriptionInput {
  readonly model: string;
  readonly request: TranscriptionRequest;
  readonly file: InputFile;
  /** The file's duration from its own bytes (a WAV header), when they tell it. */
  readonly measuredSeconds: number | undefined;
}

/** `translate`: POST /v1/audio/translations, into English; the same charge and limits. */
export function transcriptionOperation(files: Files, task: 'transcribe' | 'translate' = 'transcribe'): UnaryOperation<TranscriptionInput> {
  return {
    modality: 'audio',
    sizeParam: 'file',
    async validate(body, principal) {
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new GatewayError('invalid_parameter', `The request must be a multipart form, got ${typeName(body)}.`, { param: null });
      }
      const fields = body as Record<string, unknown>;
      const request = validateTranscriptionFields(fields, task);
      const file = await inputFileOf(fields, 'file', 'file_id', files, principal);
      if (file === undefined) throw new GatewayError('missing_required_parameter', 'Send the audio in the multipart field "file" (or an uploaded file\'s id in "file_id").', { param: 'file' });
      return { model: request.model, request, file, measuredSeconds: await measuredFileSeconds(file) };
    },
    needs: () => [{ capability: 'transcription', param: 'model' }],
    bound: (input) => ({ prompt: 0, output: 0, units: Math.ceil(heldFileSeconds(input.file, input.measuredSeconds)) }),
    async call(adapter, input, route) {
      if (adapter.transcription === undefined) throw new GatewayError('capability_not_implemented', `Provider "${adapter.id}" does not implement transcription.`);
      const result = await adapter.transcription({ request: input.request, task, file: input.file, upstreamModel: route.upstreamModel, signal: route.signal, requestId: route.requestId });
      const seconds = result.seconds ?? chargedFileSeconds(input.file, input.measuredSeconds);
      return { body: result.body, contentType: result.contentType, promptTokens: result.promptTokens ?? 0, completionTokens: result.completionTokens ?? 0, units: seconds };
    },
  };
}
