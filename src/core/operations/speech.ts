/**
 * POST /v1/audio/speech as a unary operation whose body is streamed: the audio goes to the caller
 * as the upstream makes it, and is charged per second of audio once it ended (see audio-seconds.ts
 * for how seconds are known). The audio daily cap counts the request.
 */
import { GatewayError } from '../../errors/index.js';
import { SPEECH_CONTENT_TYPES, type SpeechRequest } from '../../protocol/audio.js';
import { validateSpeechRequest } from '../../validation/speech-request.js';
import type { UnaryOperation } from '../unary-service.js';
import { speechSeconds, spokenSeconds } from './audio-seconds.js';

/** Speech may come out slower than the usual rate: the hold covers half the usual pace. */
const HOLD_SLACK = 2;
/**
 * Seconds at speed 1 that the shortest text may still take (the voice's lead-in and pauses): the
 * hold covers them on top, slowed down like the rest, or a one-letter input at speed 0.25 held one
 * second and was charged four.
 */
const HOLD_FLOOR_SECONDS = 2;

export const speechOperation: UnaryOperation<SpeechRequest> = {
  modality: 'audio',
  sizeParam: 'input',
  validate: validateSpeechRequest,
  needs: () => [{ capability: 'speech', param: 'model' }],
  bound: (request) => ({ prompt: 0, output: 0, units: Math.ceil(spokenSeconds(request) * HOLD_SLACK + HOLD_FLOOR_SECONDS / (request.speed ?? 1)) }),
  async call(adapter, request, route) {
    if (adapter.speech === undefined) throw new GatewayError('capability_not_implemented', `Provider "${adapter.id}" does not implement speech.`);
    const result = await adapter.speech({ request, upstreamModel: route.upstreamModel, signal: route.signal, requestId: route.requestId });
    const contentType = result.contentType || SPEECH_CONTENT_TYPES[request.response_format ?? 'mp3'];
    return {
      body: { chunks: result.audio, unitsOf: (bytes, head) => speechSeconds(request, contentType, bytes, head) },
      contentType,
      promptTokens: 0,
      completionTokens: 0,
    };
  },
};
