/** The OpenAI audio wire types: POST /v1/audio/speech (JSON in, audio out) and /v1/audio/transcriptions (multipart in). */

export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

/** The content type each speech format is answered with. */
export const SPEECH_CONTENT_TYPES: Readonly<Record<SpeechFormat, string>> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

export interface SpeechRequest {
  model: string;
  /** The text to speak, 1 to 4,096 characters. */
  input: string;
  /** A built-in voice by name, or a custom one by its id. */
  voice: string | { id: string };
  /** Default `mp3`. */
  response_format?: SpeechFormat;
  /** 0.25 to 4.0 (default 1). */
  speed?: number;
  instructions?: string;
  [extra: string]: unknown;
}

export const MAX_SPEECH_INPUT_CHARS = 4096;

export const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt', 'diarized_json'] as const;
export type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number];

/** The fields of a transcription request besides the file (multipart form fields, all text). */
export interface TranscriptionRequest {
  model: string;
  language?: string;
  prompt?: string;
  /** Default `json`. */
  response_format?: TranscriptionFormat;
  temperature?: number;
  /** `word` and/or `segment`; only with `verbose_json`. */
  timestamp_granularities?: Array<'word' | 'segment'>;
  /** Extra output, such as `logprobs` (gpt-4o-transcribe and its kin). */
  include?: string[];
  /**
   * How the server cuts long audio (gpt-4o-transcribe and its kin): `auto`, or voice activity
   * detection with its settings.
   */
  chunking_strategy?: 'auto' | ServerVadChunking;
  /** Names of up to four speakers a diarizing model is to recognise, each with a sample in `known_speaker_references` (data: URLs). */
  known_speaker_names?: string[];
  known_speaker_references?: string[];
}

export interface ServerVadChunking {
  type: 'server_vad';
  prefix_padding_ms?: number;
  silence_duration_ms?: number;
  threshold?: number;
}
