/**
 * The mock's speech to text. It cannot hear, so the text says what it got (the file's name and
 * size); but it does read the whole upload, as a real upstream would (a failover reads it again),
 * and it knows a WAV's length from its header, so per-second billing sees a real duration. Any
 * other format's length is unknown: `seconds` is then null, so nothing bills a made-up length, and
 * the timed formats (srt, vtt, verbose_json) span a nominal second. The bodies have OpenAI's shapes
 * for each `response_format`, so SDKs parse them as they would OpenAI's.
 */
import { wavDurationSeconds } from '../../protocol/audio-duration.js';
import type { TranscriptionRequest } from '../../protocol/audio.js';
import type { CancelSignal } from '../../util/cancellation.js';
import type { InputFile, TranscriptionCall, TranscriptionResult } from '../types.js';
import { upstreamFault } from '../upstream/upstream-faults.js';

/** Enough for a WAV header with a few extra chunks before `data`; the rest is only counted. */
const HEADER_BYTES = 4096;
/** What the timed formats span when the length of the audio is unknown. */
const NOMINAL_SECONDS = 1;
const JSON_TYPE = 'application/json';
const TEXT_TYPE = 'text/plain; charset=utf-8';

interface ReadUpload {
  readonly bytes: number;
  readonly header: Buffer;
}

async function readUpload(file: InputFile, signal: CancelSignal): Promise<ReadUpload> {
  if (signal.aborted) throw upstreamFault(signal.reason, signal);
  const stream = await file.open();
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let bytes = 0;
  try {
    for await (const piece of stream) {
      if (signal.aborted) throw upstreamFault(signal.reason, signal);
      const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
      bytes += chunk.length;
      if (keptBytes < HEADER_BYTES) {
        const part = chunk.subarray(0, HEADER_BYTES - keptBytes);
        kept.push(Buffer.from(part)); // a copy, so the rest of a large chunk is not kept alive
        keptBytes += part.length;
      }
    }
  } finally {
    // Leaving the loop early (a cancellation) must not leave the blob open.
    (stream as { destroy?: () => void }).destroy?.();
  }
  return { bytes, header: Buffer.concat(kept) };
}

/** OpenAI reports the language by name ("english"), whatever code the caller gave. */
function languageName(code: string | undefined): string {
  if (code === undefined || code === '') return 'english';
  try {
    return (new Intl.DisplayNames(['en'], { type: 'language' }).of(code) ?? code).toLowerCase();
  } catch {
    return code.toLowerCase();
  }
}

/** `HH:MM:SS` plus milliseconds after `separator` (',' for SRT, '.' for WebVTT). */
function timestamp(seconds: number, separator: string): string {
  const ms = Math.round(seconds * 1000);
  const pad = (value: number, width = 2): string => String(value).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

function verboseJson(request: TranscriptionRequest, text: string, span: number, seconds: number | null): Record<string, unknown> {
  const granularities = request.timestamp_granularities ?? ['segment'];
  const body: Record<string, unknown> = { task: 'transcribe', language: languageName(request.language), duration: span, text };
  if (granularities.includes('word')) {
    const words = text.split(' ');
    const each = span / words.length;
    body.words = words.map((word, i) => ({ word, start: round(i * each), end: round((i + 1) * each) }));
  }
  if (granularities.includes('segment')) {
    body.segments = [
      { id: 0, seek: 0, start: 0, end: span, text: ` ${text}`, tokens: [], temperature: request.temperature ?? 0, avg_logprob: 0, compression_ratio: 1, no_speech_prob: 0 },
    ];
  }
  if (seconds !== null) body.usage = { type: 'duration', seconds: Math.ceil(seconds) };
  return body;
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

export async function mockTranscription(call: TranscriptionCall): Promise<TranscriptionResult> {
  const { bytes, header } = await readUpload(call.file, call.signal);
  // A WAV of compressed samples plays for as long as its codec says, which the mock cannot decode.
  const seconds = wavDurationSeconds(header, bytes, { uncompressedOnly: true });
  const translating = call.task === 'translate';
  const text = `Mock ${translating ? 'translation' : 'transcription'} of ${call.file.filename} (${bytes} bytes).`;
  const span = seconds ?? NOMINAL_SECONDS;
  const cue = (separator: string): string => `${timestamp(0, separator)} --> ${timestamp(span, separator)}\n${text}\n`;
  switch (call.request.response_format ?? 'json') {
    case 'text':
      return { body: `${text}\n`, contentType: TEXT_TYPE, seconds };
    case 'srt':
      return { body: `1\n${cue(',')}\n`, contentType: TEXT_TYPE, seconds };
    case 'vtt':
      return { body: `WEBVTT\n\n${cue('.')}\n`, contentType: TEXT_TYPE, seconds };
    case 'verbose_json':
      return { body: JSON.stringify({ ...verboseJson(call.request, text, span, seconds), ...(translating ? { task: 'translate', language: 'english' } : {}) }), contentType: JSON_TYPE, seconds };
    case 'diarized_json': {
      // As gpt-4o-transcribe-diarize answers: segments labelled by speaker, the first known one if named.
      const speaker = call.request.known_speaker_names?.[0] ?? 'A';
      const usage = seconds === null ? {} : { usage: { type: 'duration', seconds: Math.ceil(seconds) } };
      const segments = [{ type: 'transcript.text.segment', id: 'seg_0', start: 0, end: span, text, speaker }];
      return { body: JSON.stringify({ task: 'transcribe', duration: span, text, segments, ...usage }), contentType: JSON_TYPE, seconds };
    }
    case 'json': {
      // OpenAI bills (and reports) transcription time in whole seconds, rounded up.
      const usage = seconds === null ? {} : { usage: { type: 'duration', seconds: Math.ceil(seconds) } };
      return { body: JSON.stringify({ text, ...usage }), contentType: JSON_TYPE, seconds };
    }
  }
}
