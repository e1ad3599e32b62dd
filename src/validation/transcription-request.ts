/**
 * Validation of a transcription request (POST /v1/audio/transcriptions). Its fields arrive as
 * multipart form text, so numbers and lists are read from text here; the file itself is resolved
 * by the operation.
 */
import { GatewayError } from '../errors/index.js';
import { TRANSCRIPTION_FORMATS, type ServerVadChunking, type TranscriptionFormat, type TranscriptionRequest } from '../protocol/audio.js';
import { numberField } from '../core/operations/form-input.js';

/** The settings of `chunking_strategy: { type: "server_vad", ... }`, sent as bracketed form fields. */
const CHUNKING_FIELDS = ['type', 'prefix_padding_ms', 'silence_duration_ms', 'threshold'] as const;
/** OpenAI takes up to four known speakers. */
const MAX_KNOWN_SPEAKERS = 4;

const FIELDS = new Set([
  'model', 'file', 'file_id', 'language', 'prompt', 'response_format', 'temperature', 'timestamp_granularities', 'stream', 'chunking_strategy', 'include',
  'known_speaker_names', 'known_speaker_references', ...CHUNKING_FIELDS.map((name) => `chunking_strategy[${name}]`),
]);
const GRANULARITIES = ['word', 'segment'] as const;

/** What a translation (into English) takes: no language, no timestamps, no chunking or speakers. */
const TRANSLATION_FIELDS = new Set(['model', 'file', 'file_id', 'prompt', 'response_format', 'temperature']);

export function validateTranscriptionFields(body: Record<string, unknown>, task: 'transcribe' | 'translate' = 'transcribe'): TranscriptionRequest {
  const known = task === 'translate' ? TRANSLATION_FIELDS : FIELDS;
  for (const name of Object.keys(body)) {
    if (!known.has(name)) throw new GatewayError('invalid_parameter', `Unknown field ${name}${task === 'translate' && FIELDS.has(name) ? ' for a translation' : ''}.`, { param: name });
  }
  const model = text(body, 'model', 256);
  if (model === undefined) throw new GatewayError('missing_required_parameter', 'model is required.', { param: 'model' });
  if (body.stream === 'true' || body.stream === true) {
    throw new GatewayError('invalid_parameter', 'Streamed transcriptions are not supported; leave stream out or false.', { param: 'stream' });
  }
  const request: TranscriptionRequest = { model };
  const language = text(body, 'language', 16);
  if (language !== undefined) request.language = language;
  const prompt = text(body, 'prompt', 10_000);
  if (prompt !== undefined) request.prompt = prompt;
  const format = text(body, 'response_format', 32);
  if (format !== undefined) {
    if (!(TRANSCRIPTION_FORMATS as readonly string[]).includes(format) || (task === 'translate' && format === 'diarized_json')) {
      throw new GatewayError('invalid_parameter', `response_format must be one of ${TRANSCRIPTION_FORMATS.join(', ')}, got "${format}".`, { param: 'response_format' });
    }
    request.response_format = format as TranscriptionFormat;
  }
  const temperature = numberField(body, 'temperature');
  if (temperature !== undefined) {
    if (temperature < 0 || temperature > 1) throw new GatewayError('invalid_parameter', `temperature must be from 0 to 1, got ${temperature}.`, { param: 'temperature' });
    request.temperature = temperature;
  }
  const granularities = body.timestamp_granularities;
  if (granularities !== undefined) {
    const list = Array.isArray(granularities) ? granularities : [granularities];
    for (const g of list) {
      if (!(GRANULARITIES as readonly unknown[]).includes(g)) throw new GatewayError('invalid_parameter', `timestamp_granularities takes "word" and "segment", got ${JSON.stringify(g)}.`, { param: 'timestamp_granularities' });
    }
    if (request.response_format !== 'verbose_json') {
      throw new GatewayError('invalid_parameter', 'timestamp_granularities needs response_format "verbose_json".', { param: 'timestamp_granularities' });
    }
    request.timestamp_granularities = list as Array<'word' | 'segment'>;
  }
  const include = body.include;
  if (include !== undefined) {
    const list = Array.isArray(include) ? include : [include];
    for (const item of list) {
      if (item !== 'logprobs') throw new GatewayError('invalid_parameter', `include takes "logprobs", got ${JSON.stringify(item)}.`, { param: 'include' });
    }
    request.include = list as string[];
  }
  const chunking = chunkingOf(body);
  if (chunking !== undefined) request.chunking_strategy = chunking;
  const speakers = knownSpeakersOf(body);
  if (speakers !== undefined) {
    request.known_speaker_names = speakers.names;
    request.known_speaker_references = speakers.references;
  }
  return request;
}

/** `auto` as a plain field, or the object form as `chunking_strategy[type]` and its settings. */
function chunkingOf(body: Record<string, unknown>): TranscriptionRequest['chunking_strategy'] {
  const plain = body.chunking_strategy;
  const type = body['chunking_strategy[type]'];
  if (plain !== undefined) {
    if (plain !== 'auto') throw new GatewayError('invalid_parameter', `chunking_strategy takes "auto" or an object of type "server_vad", got ${JSON.stringify(plain)?.slice(0, 40)}.`, { param: 'chunking_strategy' });
    return 'auto';
  }
  const settings = CHUNKING_FIELDS.filter((name) => name !== 'type' && body[`chunking_strategy[${name}]`] !== undefined);
  if (type === undefined) {
    if (settings.length > 0) throw new GatewayError('missing_required_parameter', 'chunking_strategy[type] is required with its settings ("server_vad").', { param: 'chunking_strategy[type]' });
    return undefined;
  }
  if (type !== 'server_vad') throw new GatewayError('invalid_parameter', `chunking_strategy[type] must be "server_vad", got ${JSON.stringify(type)?.slice(0, 40)}.`, { param: 'chunking_strategy[type]' });
  const vad: ServerVadChunking = { type: 'server_vad' };
  for (const name of settings) {
    const param = `chunking_strategy[${name}]`;
    const value = numberField(body, param) as number;
    if (name === 'threshold' ? value < 0 || value > 1 : !Number.isInteger(value) || value < 0) {
      throw new GatewayError('invalid_parameter', `${param} must be ${name === 'threshold' ? 'a number from 0 to 1' : 'a whole number of milliseconds'}, got ${value}.`, { param });
    }
    vad[name as Exclude<(typeof CHUNKING_FIELDS)[number], 'type'>] = value;
  }
  return vad;
}

/** Up to four names, each with its sample as a data: URL, in the same order. */
function knownSpeakersOf(body: Record<string, unknown>): { names: string[]; references: string[] } | undefined {
  const list = (name: string): string[] | undefined => {
    const value = body[name];
    if (value === undefined) return undefined;
    const values = Array.isArray(value) ? value : [value];
    if (values.length > MAX_KNOWN_SPEAKERS) throw new GatewayError('invalid_parameter', `${name} takes at most ${MAX_KNOWN_SPEAKERS} entries.`, { param: name });
    if (!values.every((v): v is string => typeof v === 'string' && v !== '')) throw new GatewayError('invalid_parameter', `${name} must be non-empty text.`, { param: name });
    return values;
  };
  const names = list('known_speaker_names');
  const references = list('known_speaker_references');
  if (names === undefined && references === undefined) return undefined;
  if (names === undefined || references === undefined || names.length !== references.length) {
    throw new GatewayError('invalid_parameter', 'known_speaker_names and known_speaker_references go together, one reference for each name.', { param: names === undefined ? 'known_speaker_names' : 'known_speaker_references' });
  }
  if (!references.every((reference) => reference.startsWith('data:'))) {
    throw new GatewayError('invalid_parameter', 'known_speaker_references must be data: URLs of audio samples.', { param: 'known_speaker_references' });
  }
  return { names, references };
}

function text(body: Record<string, unknown>, name: string, maxLength: number): string | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new GatewayError('invalid_parameter', `${name} must be a non-empty string.`, { param: name });
  if (value.length > maxLength) throw new GatewayError('invalid_parameter', `${name} is longer than ${maxLength} characters.`, { param: name });
  return value;
}
