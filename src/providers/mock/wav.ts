/**
 * The mock's audio, written by hand: a real PCM WAV of a sine tone (so a player plays something
 * audible and a duration parser has a real header to read) and raw PCM silence for OpenAI's `pcm`
 * format. Both are deterministic: the same length always gives the same bytes.
 */

const TONE_HZ = 440;
/** A quarter of full scale: clearly audible, never clipping. */
const TONE_AMPLITUDE = Math.round(0.25 * 0x7fff);
const BYTES_PER_SAMPLE = 2; // 16-bit mono
const WAV_HEADER_BYTES = 44;

function sampleCount(seconds: number, sampleRate: number): number {
  return Math.max(0, Math.round(seconds * sampleRate));
}

/** A RIFF/WAVE file: `fmt ` (PCM, 16-bit, mono) then `data`, holding a 440 Hz tone. */
export function toneWav(seconds: number, sampleRate = 8000): Buffer {
  const samples = sampleCount(seconds, sampleRate);
  const dataBytes = samples * BYTES_PER_SAMPLE;
  const wav = Buffer.alloc(WAV_HEADER_BYTES + dataBytes);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(WAV_HEADER_BYTES - 8 + dataBytes, 4);
  wav.write('WAVE', 8, 'ascii');
  wav.write('fmt ', 12, 'ascii');
  wav.writeUInt32LE(16, 16); // fmt chunk size for plain PCM
  wav.writeUInt16LE(1, 20); // audio format: PCM
  wav.writeUInt16LE(1, 22); // channels
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * BYTES_PER_SAMPLE, 28); // byte rate
  wav.writeUInt16LE(BYTES_PER_SAMPLE, 32); // block align
  wav.writeUInt16LE(16, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(dataBytes, 40);
  const step = (2 * Math.PI * TONE_HZ) / sampleRate;
  for (let i = 0; i < samples; i++) {
    wav.writeInt16LE(Math.round(TONE_AMPLITUDE * Math.sin(i * step)), WAV_HEADER_BYTES + i * BYTES_PER_SAMPLE);
  }
  return wav;
}

/** Raw 16-bit little-endian mono PCM of silence, as OpenAI's `pcm` format (24 kHz) has no header. */
export function silencePcm(seconds: number, sampleRate = 24000): Buffer {
  return Buffer.alloc(sampleCount(seconds, sampleRate) * BYTES_PER_SAMPLE);
}
