/**
 * Seconds of audio, the unit audio is charged in. Measured where the bytes say it (WAV headers,
 * raw PCM at OpenAI's 24 kHz 16-bit mono); otherwise the best estimate available, documented in
 * the README: speech by its text at a speaking rate, a compressed upload by its size at 128 kbit/s.
 */
import { pcmDurationSeconds, wavDurationSeconds } from '../../protocol/audio-duration.js';
import type { SpeechRequest } from '../../protocol/audio.js';
import type { InputFile } from '../../providers/types.js';

/** About 15 characters of English text a second at speed 1. */
const SPOKEN_CHARS_PER_SECOND = 15;
/** Bytes a second of a typical compressed upload (128 kbit/s). */
const COMPRESSED_BYTES_PER_SECOND = 16_000;
/**
 * Bytes a second of a compressed upload at the low end of speech encodings (32 kbit/s): what its
 * credit hold assumes, since the hold must cover the audio's real length, which only the upstream
 * learns.
 */
const LOW_BITRATE_BYTES_PER_SECOND = 4_000;
const HEAD_BYTES = 4096;

export function spokenSeconds(request: SpeechRequest): number {
  return request.input.length / SPOKEN_CHARS_PER_SECOND / (request.speed ?? 1);
}

/** Seconds of speech that was relayed: from the audio itself when its format allows. */
export function speechSeconds(request: SpeechRequest, contentType: string, bytes: number, head: Buffer): number {
  const type = contentType.toLowerCase();
  if (type.includes('wav')) return wavDurationSeconds(head, bytes) ?? spokenSeconds(request);
  if (type.includes('pcm') || request.response_format === 'pcm') return pcmDurationSeconds(bytes);
  return spokenSeconds(request);
}

function estimatedFileSeconds(file: InputFile): number {
  return file.size / COMPRESSED_BYTES_PER_SECOND;
}

/**
 * The most bytes a second an uploaded WAV can plausibly hold (48 kHz, 2 channels, 32 bits): its
 * header is the caller's to write, so its hold is never shorter than its size at this rate.
 */
const HIGHEST_WAV_BYTES_PER_SECOND = 384_000;

/** The seconds a transcription's credit hold covers: a WAV's own, else the file's length at a low bitrate. */
export function heldFileSeconds(file: InputFile, measured: number | undefined): number {
  if (measured === undefined) return file.size / LOW_BITRATE_BYTES_PER_SECOND;
  return Math.max(measured, file.size / HIGHEST_WAV_BYTES_PER_SECOND);
}

/**
 * The seconds a transcription is charged when the upstream does not say: a WAV's own, never less
 * than its size at the highest real rate (the header is the caller's to write), else the file's
 * length at 128 kbit/s.
 */
export function chargedFileSeconds(file: InputFile, measured: number | undefined): number {
  if (measured === undefined) return estimatedFileSeconds(file);
  return Math.max(measured, file.size / HIGHEST_WAV_BYTES_PER_SECOND);
}

/** The duration a file's own bytes say (the header of a WAV of uncompressed samples), or undefined. */
export async function measuredFileSeconds(file: InputFile): Promise<number | undefined> {
  const stream = await file.open();
  const head: Buffer[] = [];
  let read = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      head.push(chunk);
      read += chunk.length;
      if (read >= HEAD_BYTES) break;
    }
  } finally {
    (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
  }
  return wavDurationSeconds(Buffer.concat(head).subarray(0, HEAD_BYTES), file.size, { uncompressedOnly: true }) ?? undefined;
}
