/**
 * Speech to text over OpenAI's wire format (POST {base}/audio/transcriptions, multipart). The
 * answer is relayed as received, in whichever format the caller asked for; it is parsed only to
 * read what the call is billed by: seconds of audio (whisper) or tokens (gpt-4o-*-transcribe).
 */
import type { TranscriptionFormat } from '../../protocol/audio.js';
import type { TranscriptionCall, TranscriptionResult } from '../types.js';
import { errorDetail, malformed, reportedError } from './errors.js';
import { multipartBody, type FormPart, type MultipartBody } from './multipart-body.js';

export const TRANSCRIPTIONS_PATH = '/audio/transcriptions';
/** Speech to English text: the same form, fewer fields (the validation leaves the others out). */
export const TRANSLATIONS_PATH = '/audio/translations';

/**
 * The fields as the openai SDK names them (an array as one `name[]` part per value), the file
 * last so that a server reading the stream has every field before the bulk arrives.
 */
export function transcriptionForm(call: TranscriptionCall): MultipartBody {
  const { language, prompt, response_format: format, temperature, timestamp_granularities: granularities } = call.request;
  const parts: FormPart[] = [{ name: 'model', value: call.upstreamModel }];
  if (language !== undefined) parts.push({ name: 'language', value: language });
  if (prompt !== undefined) parts.push({ name: 'prompt', value: prompt });
  if (format !== undefined) parts.push({ name: 'response_format', value: format });
  if (temperature !== undefined) parts.push({ name: 'temperature', value: String(temperature) });
  for (const granularity of granularities ?? []) parts.push({ name: 'timestamp_granularities[]', value: granularity });
  for (const item of call.request.include ?? []) parts.push({ name: 'include[]', value: item });
  const chunking = call.request.chunking_strategy;
  if (chunking === 'auto') parts.push({ name: 'chunking_strategy', value: chunking });
  else if (chunking !== undefined) for (const [name, value] of Object.entries(chunking)) parts.push({ name: `chunking_strategy[${name}]`, value: String(value) });
  for (const name of call.request.known_speaker_names ?? []) parts.push({ name: 'known_speaker_names[]', value: name });
  for (const reference of call.request.known_speaker_references ?? []) parts.push({ name: 'known_speaker_references[]', value: reference });
  parts.push({ name: 'file', file: call.file });
  return multipartBody(parts);
}

interface TranscriptionJson {
  text?: unknown;
  duration?: unknown;
  usage?: { type?: unknown; seconds?: unknown; input_tokens?: unknown; output_tokens?: unknown } | null;
  error?: unknown;
}

export function transcriptionResult(
  providerId: string,
  apiKey: string | undefined,
  body: string,
  upstreamContentType: string | undefined,
  format: TranscriptionFormat = 'json',
): TranscriptionResult {
  const json = isJsonFormat(format);
  const contentType = upstreamContentType ?? (json ? 'application/json' : 'text/plain; charset=utf-8');
  // srt, vtt and text carry no duration or usage: the gateway bills those by other means.
  if (!json) return { body, contentType, seconds: null };

  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    throw malformed(providerId, `a ${format} transcription that is not valid JSON`, err);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw malformed(providerId, 'a transcription that is not a JSON object');
  const answer = parsed as TranscriptionJson;
  if (typeof answer.text !== 'string') {
    if (answer.error !== undefined && answer.error !== null) throw reportedError(providerId, apiKey, errorDetail(answer));
    throw malformed(providerId, 'a transcription without text');
  }

  const usage = typeof answer.usage === 'object' && answer.usage !== null ? answer.usage : {};
  // verbose_json's `duration` is the audio's length; `usage.seconds` is the same rounded up for billing.
  const seconds = amount(answer.duration) ?? (usage.type === 'duration' ? amount(usage.seconds) : undefined) ?? null;
  const result: TranscriptionResult = { body, contentType, seconds };
  if (usage.type !== 'tokens') return result;
  const promptTokens = wholeAmount(usage.input_tokens);
  const completionTokens = wholeAmount(usage.output_tokens);
  return {
    ...result,
    ...(promptTokens === undefined ? {} : { promptTokens }),
    ...(completionTokens === undefined ? {} : { completionTokens }),
  };
}

/** `json`, `verbose_json`, and formats added later in the same family (`diarized_json`). */
function isJsonFormat(format: string): boolean {
  return format === 'json' || format.endsWith('_json');
}

function amount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function wholeAmount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}
