/**
 * The mock's text to speech: a length that follows the text (about 15 characters a second, as
 * speech goes, divided by `speed`) so that per-second billing and limits have something real to
 * count. `pcm` is answered as OpenAI does (raw 24 kHz 16-bit mono, here silence); every other
 * format is answered as a WAV of a tone, because the mock cannot encode mp3, opus, aac or flac and
 * a WAV is at least audio a player understands: its content type says `audio/wav`, not the format
 * asked for. The audio comes in ~16 KiB pieces, like a streamed upstream body, and stops when the
 * call is cancelled.
 */
import { SPEECH_CONTENT_TYPES } from '../../protocol/audio.js';
import type { SpeechCall, SpeechResult } from '../types.js';
import { upstreamFault } from '../upstream/upstream-faults.js';
import { silencePcm, toneWav } from './wav.js';

const CHARS_PER_SECOND = 15;
const MAX_SECONDS = 300;
export const SPEECH_PIECE_BYTES = 16 * 1024;

/** Seconds of speech the mock makes for a text: max(1, ceil(chars / 15)) / speed, at most 300. */
export function mockSpeechSeconds(input: string, speed = 1): number {
  const characters = [...input].length;
  return Math.min(MAX_SECONDS, Math.max(1, Math.ceil(characters / CHARS_PER_SECOND)) / speed);
}

export function mockSpeech(call: SpeechCall): SpeechResult {
  const seconds = mockSpeechSeconds(call.request.input, call.request.speed);
  const pcm = call.request.response_format === 'pcm';
  const audio = pcm ? silencePcm(seconds) : toneWav(seconds);
  const { signal } = call;

  async function* pieces(): AsyncGenerator<Uint8Array> {
    for (let offset = 0; offset < audio.length; offset += SPEECH_PIECE_BYTES) {
      if (signal.aborted) throw upstreamFault(signal.reason, signal);
      yield audio.subarray(offset, offset + SPEECH_PIECE_BYTES);
      // A real upstream's pieces arrive over time; this lets a cancellation land between them.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  return { contentType: pcm ? SPEECH_CONTENT_TYPES.pcm : SPEECH_CONTENT_TYPES.wav, audio: pieces() };
}
