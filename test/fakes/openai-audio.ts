/**
 * OpenAI's audio endpoints for the fake server, on its documented wire format.
 *
 * POST /v1/audio/speech (JSON) answers audio bytes in several chunks with the format's content
 * type: a real WAV for `wav` (24 kHz mono 16-bit, as OpenAI's voices), raw samples for `pcm`, and
 * for the compressed formats the same samples behind the format's magic bytes (not playable, but
 * of the right type and deterministic, so tests can compare what was relayed).
 *
 * POST /v1/audio/transcriptions (multipart) answers in the requested `response_format`; the text
 * says how many bytes of audio arrived, so tests can check an upload reached the server intact.
 * whisper-1 reports `usage: {type: "duration"}`; gpt-4o-* models bill by tokens and, as at
 * OpenAI, support only `json` and `text`.
 */
import { openAIError, type FakeAnswer } from './fake-answer.js';
import { formField, formFile, formValues, isFakeForm } from './multipart-form.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- request bodies are whatever the client sent.
type Json = Record<string, any>;

export const FAKE_SPEECH_CONTENT_TYPES = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
} as const;
type SpeechFormat = keyof typeof FAKE_SPEECH_CONTENT_TYPES;

const SAMPLE_RATE = 24_000;
/** Audio per word of input, so a longer text gives a longer clip. */
const SAMPLES_PER_WORD = 1_200;
const SPEECH_CHUNKS = 4;
const MAX_INPUT_CHARS = 4096;

const MAGIC: Record<Exclude<SpeechFormat, 'wav' | 'pcm'>, Buffer> = {
  mp3: Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'),
  opus: Buffer.from('OggS\x00\x02', 'latin1'),
  aac: Buffer.from([0xff, 0xf1, 0x50, 0x80]),
  flac: Buffer.from('fLaC', 'latin1'),
};

/** The exact bytes the fake answers for this format and input. */
export function fakeSpeechAudio(format: SpeechFormat, input: string): Buffer {
  const words = Math.max(1, input.split(/\s+/).filter(Boolean).length);
  const samples = Buffer.alloc(words * SAMPLES_PER_WORD * 2);
  for (let i = 0; i < samples.length / 2; i++) samples.writeInt16LE(Math.round(8_000 * Math.sin((2 * Math.PI * 440 * i) / SAMPLE_RATE)), i * 2);
  if (format === 'pcm') return samples;
  if (format === 'wav') return Buffer.concat([wavHeader(samples.length), samples]);
  return Buffer.concat([MAGIC[format], samples]);
}

/** The canonical 44-byte RIFF/WAVE header for 16-bit mono PCM. */
function wavHeader(dataBytes: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

export function fakeSpeech(parsed: unknown, cutAfterChunks?: number): FakeAnswer {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || isFakeForm(parsed)) {
    return openAIError(400, 'We could not parse the JSON body of your request.');
  }
  const body = parsed as Json;
  if (typeof body.model !== 'string') return openAIError(400, 'you must provide a model parameter', 'model');
  if (typeof body.input !== 'string') return openAIError(400, "Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
  if (body.input === '') return openAIError(400, "Invalid 'input': empty string. Expected a string with minimum length 1, but got an empty string instead.", 'input', 'empty_string');
  if (body.input.length > MAX_INPUT_CHARS) {
    return openAIError(400, `Invalid 'input': string too long. Expected a string with maximum length ${MAX_INPUT_CHARS}, but got a string with length ${body.input.length} instead.`, 'input', 'string_above_max_length');
  }
  const voice: unknown = body.voice;
  if (!(typeof voice === 'string' && voice !== '') && !(typeof voice === 'object' && voice !== null && typeof (voice as Json).id === 'string')) {
    return openAIError(400, "Missing required parameter: 'voice'.", 'voice', 'missing_required_parameter');
  }
  const format: unknown = body.response_format ?? 'mp3';
  if (typeof format !== 'string' || !(format in FAKE_SPEECH_CONTENT_TYPES)) {
    return openAIError(400, `Invalid value: '${String(format)}'. Supported values are: 'mp3', 'opus', 'aac', 'flac', 'wav', and 'pcm'.`, 'response_format', 'invalid_value');
  }
  if (body.speed !== undefined && (typeof body.speed !== 'number' || body.speed < 0.25 || body.speed > 4)) {
    return openAIError(400, `Invalid 'speed': expected a number from 0.25 to 4.0.`, 'speed', 'invalid_value');
  }
  const audio = fakeSpeechAudio(format as SpeechFormat, body.input);
  const step = Math.ceil(audio.length / SPEECH_CHUNKS);
  const chunks = Array.from({ length: Math.ceil(audio.length / step) }, (_, i) => audio.subarray(i * step, (i + 1) * step));
  return { status: 200, contentType: FAKE_SPEECH_CONTENT_TYPES[format as SpeechFormat], chunks, ...(cutAfterChunks === undefined ? {} : { cutAfter: cutAfterChunks }) };
}

// ---- transcriptions --------------------------------------------------------------------------

const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'];

/** The transcript for an upload of `bytes` bytes. */
export function fakeTranscript(bytes: number): string {
  return `The fake server received ${bytes} bytes of audio.`;
}

/** The audio's duration in seconds: 16 kB of upload per second, at least half a second. */
export function fakeAudioSeconds(bytes: number): number {
  return Math.max(0.5, Math.round((bytes / 16_000) * 100) / 100);
}

/** Token billing of gpt-4o-*-transcribe: one audio token per kB, one output token per word. */
export function fakeTranscriptionTokens(bytes: number): { input: number; output: number } {
  return { input: Math.max(1, Math.ceil(bytes / 1000)), output: fakeTranscript(bytes).split(' ').length };
}

/**
 * `malformed` answers a JSON format with a cut-off body. `translate`: POST /v1/audio/translations,
 * which takes no language, timestamps or chunking, and answers in English.
 */
export function fakeTranscription(parsed: unknown, malformed = false, task: 'transcribe' | 'translate' = 'transcribe'): FakeAnswer {
  if (!isFakeForm(parsed)) return openAIError(400, "Invalid Content-Type header (application/json), expected multipart/form-data. (HINT: If you're using curl, you can pass -H 'Content-Type: multipart/form-data')");
  const model = formField(parsed, 'model');
  if (model === undefined || model === '') return openAIError(400, 'you must provide a model parameter', 'model');
  const file = formFile(parsed, 'file');
  if (file === undefined) return openAIError(400, "Missing required parameter: 'file'.", 'file', 'missing_required_parameter');
  if (file.size === 0) return openAIError(400, 'Audio file might be corrupted or unsupported', 'file', 'invalid_value');
  if (task === 'translate') {
    const extra = ['language', 'timestamp_granularities[]', 'chunking_strategy', 'include[]'].find((name) => formValues(parsed, name).length > 0);
    if (extra !== undefined) return openAIError(400, `Unrecognized request argument supplied: ${extra}`, extra);
  }
  const format = formField(parsed, 'response_format') ?? 'json';
  if (!TRANSCRIPTION_FORMATS.includes(format)) {
    return openAIError(400, `Invalid value: '${format}'. Supported values are: 'json', 'text', 'srt', 'verbose_json', and 'vtt'.`, 'response_format', 'invalid_value');
  }
  const byTokens = model.startsWith('gpt-4o');
  if (byTokens && format !== 'json' && format !== 'text') {
    return openAIError(400, `response_format '${format}' is not compatible with model '${model}'. Use 'json' or 'text' instead.`, 'response_format', 'unsupported_value');
  }
  const granularities = formValues(parsed, 'timestamp_granularities[]');
  if (granularities.length > 0 && format !== 'verbose_json') {
    return openAIError(400, "timestamp_granularities is only supported when response_format is 'verbose_json'.", 'timestamp_granularities', 'invalid_value');
  }

  const text = fakeTranscript(file.size);
  const duration = fakeAudioSeconds(file.size);
  if (malformed && (format === 'json' || format === 'verbose_json')) return { status: 200, contentType: 'application/json', text: `{"text":"${text}",` };
  switch (format) {
    case 'text':
      return { status: 200, contentType: 'text/plain; charset=utf-8', text: `${text}\n` };
    case 'srt':
      return { status: 200, contentType: 'text/plain; charset=utf-8', text: `1\n00:00:00,000 --> ${timestamp(duration, ',')}\n${text}\n\n` };
    case 'vtt':
      return { status: 200, contentType: 'text/plain; charset=utf-8', text: `WEBVTT\n\n00:00:00.000 --> ${timestamp(duration, '.')}\n${text}\n\n` };
    case 'verbose_json':
      return { status: 200, json: { ...verbose(text, duration, formField(parsed, 'language'), granularities), ...(task === 'translate' ? { task: 'translate' } : {}) } };
    default: {
      if (!byTokens) return { status: 200, json: { text, usage: { type: 'duration', seconds: Math.ceil(duration) } } };
      const tokens = fakeTranscriptionTokens(file.size);
      const usage = { type: 'tokens', input_tokens: tokens.input, input_token_details: { text_tokens: 0, audio_tokens: tokens.input }, output_tokens: tokens.output, total_tokens: tokens.input + tokens.output };
      return { status: 200, json: { text, usage } };
    }
  }
}

function verbose(text: string, duration: number, language: string | undefined, granularities: string[]): Json {
  const answer: Json = { task: 'transcribe', language: language === undefined || language === 'en' ? 'english' : language, duration, text };
  if (granularities.length === 0 || granularities.includes('segment')) {
    answer.segments = [{ id: 0, seek: 0, start: 0, end: duration, text: ` ${text}`, tokens: [50364, 440, 7592, 50464], temperature: 0, avg_logprob: -0.21, compression_ratio: 1.05, no_speech_prob: 0.01 }];
  }
  if (granularities.includes('word')) {
    const words = text.split(' ');
    answer.words = words.map((word, i) => ({ word, start: round2((duration * i) / words.length), end: round2((duration * (i + 1)) / words.length) }));
  }
  answer.usage = { type: 'duration', seconds: Math.ceil(duration) };
  return answer;
}

function timestamp(seconds: number, separator: string): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
