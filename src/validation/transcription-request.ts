/**
 * Validation of a transcription request (POST /v1/audio/transcriptions). Its fields arrive as
 * multipart form text, so numbers and lists are read from text here; the file itself is resolved
 * by the operation.
 */
import { GatewayError } from '../errors/index.js';
import { TRANSCRIPTION_FORMATS, type TranscriptionFormat, type TranscriptionRequest } from '../protocol/audio.js';
import { numberField } from '../core/operations/form-input.js';

const FIELDS = new Set(['model', 'file', 'file_id', 'language', 'prompt', 'response_format', 'temperature', 'timestamp_granularities', 'stream', 'chunking_strategy', 'include']);
const GRANULARITIES = ['word', 'segment'] as const;

export function validateTranscriptionFields(body: Record<string, unknown>): TranscriptionRequest {
  for (const name of Object.keys(body)) {
    if (!FIELDS.has(name)) throw new GatewayError('invalid_parameter', `Unknown field ${name}.`, { param: name });
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
    if (!(TRANSCRIPTION_FORMATS as readonly string[]).includes(format)) {
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
  const chunking = body.chunking_strategy;
  if (chunking !== undefined) {
    // The object form (server_vad with its thresholds) arrives as bracketed form fields, which are refused above as unknown.
    if (chunking !== 'auto') throw new GatewayError('invalid_parameter', `chunking_strategy takes "auto" here, got ${JSON.stringify(chunking)}.`, { param: 'chunking_strategy' });
    request.chunking_strategy = 'auto';
  }
  return request;
}

function text(body: Record<string, unknown>, name: string, maxLength: number): string | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new GatewayError('invalid_parameter', `${name} must be a non-empty string.`, { param: name });
  if (value.length > maxLength) throw new GatewayError('invalid_parameter', `${name} is longer than ${maxLength} characters.`, { param: name });
  return value;
}
