/**
 * Text to speech over OpenAI's wire format (POST {base}/audio/speech): JSON in, audio bytes out.
 * The audio is relayed as it arrives, so the caller hears the start while the rest is generated;
 * nothing here holds the whole clip.
 */
import { SPEECH_CONTENT_TYPES, type SpeechFormat } from '../../protocol/audio.js';
import type { SpeechCall, SpeechResult } from '../types.js';
import { headerValue, readBodyText, relayBody, type UpstreamResponse } from '../upstream/upstream-client.js';
import { malformed, parseErrorBody, reportedError } from './errors.js';

export const SPEECH_PATH = '/audio/speech';
/** What the openai SDK asks for: the audio itself. */
export const SPEECH_ACCEPT = 'application/octet-stream';

export function speechBody(call: SpeechCall): string {
  return JSON.stringify({ ...call.request, model: call.upstreamModel });
}

/** The audio of a 2xx answer; `res` is consumed (relayed, or read for the error it carries). */
export async function speechResult(providerId: string, apiKey: string | undefined, res: UpstreamResponse, call: SpeechCall): Promise<SpeechResult> {
  const upstreamType = headerValue(res.headers, 'content-type');
  if (upstreamType !== undefined && isJson(upstreamType)) {
    // No OpenAI-compatible server answers audio as JSON: this is an error under a 2xx status
    // (some proxies do that), and its message is worth more than "malformed".
    const text = await readBodyText(res, call.signal);
    const detail = parseErrorBody(text);
    if (detail.message !== undefined) throw reportedError(providerId, apiKey, detail);
    throw malformed(providerId, 'JSON instead of audio');
  }
  return { contentType: upstreamType ?? defaultContentType(call.request.response_format), audio: relayBody(res, call.signal) };
}

function defaultContentType(format: SpeechFormat | undefined): string {
  return SPEECH_CONTENT_TYPES[format ?? 'mp3'] ?? 'application/octet-stream';
}

function isJson(contentType: string): boolean {
  return contentType.trimStart().toLowerCase().startsWith('application/json');
}
