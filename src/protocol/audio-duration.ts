/**
 * How long an audio file plays, from its bytes, for the formats where that is cheap and exact:
 * WAV (from the header alone plus the file's size) and OpenAI's headerless `pcm`. The gateway uses
 * it to bill audio seconds when an upstream does not say, and the mock to answer transcriptions,
 * so it depends on nothing but the bytes.
 */

/** OpenAI's `pcm` speech format: 24 kHz, 16-bit, mono, no header. */
export const OPENAI_PCM_SAMPLE_RATE = 24000;
const PCM_BYTES_PER_SAMPLE = 2;

/** A `data` size streaming encoders write when they do not know the length yet. */
const UNKNOWN_SIZE = 0xffffffff;
const RIFF_HEADER_BYTES = 12;
const CHUNK_HEADER_BYTES = 8;
/** audio format, channels, sample rate, byte rate, block align, bits per sample: the part of `fmt ` we need. */
const FMT_MIN_BYTES = 16;
/** Format tags of uncompressed samples: PCM, IEEE float, and the extensible form (whose samples are these too in practice). */
const UNCOMPRESSED = new Set([0x0001, 0x0003, 0xfffe]);

function fourCc(bytes: Uint8Array, offset: number): string {
  return String.fromCharCode(bytes[offset]!, bytes[offset + 1]!, bytes[offset + 2]!, bytes[offset + 3]!);
}

/**
 * Seconds of audio in a WAV file, from its first bytes (`header`, which must reach the start of
 * the `data` chunk) and its total size. Walks the chunks rather than assuming the canonical
 * 44-byte layout, because encoders put LIST, fact or JUNK chunks before `data`. A `data` size of 0
 * or 0xFFFFFFFF (a WAV written while streaming) means "to the end of the file". Null when the bytes
 * are not a WAV, or the header ends before `data`, or (with `uncompressedOnly`) the samples are
 * compressed: their length is then the codec's, and the header's byte rate only what its writer
 * put there, so a caller's file is not measured by it.
 */
export function wavDurationSeconds(header: Uint8Array, totalBytes: number, options: { uncompressedOnly?: boolean } = {}): number | null {
  if (header.length < RIFF_HEADER_BYTES || fourCc(header, 0) !== 'RIFF' || fourCc(header, 8) !== 'WAVE') return null;
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  let byteRate: number | null = null;
  let offset = RIFF_HEADER_BYTES;
  while (offset + CHUNK_HEADER_BYTES <= header.length) {
    const id = fourCc(header, offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + CHUNK_HEADER_BYTES;
    if (id === 'fmt ') {
      if (body + FMT_MIN_BYTES > header.length) return null;
      const format = view.getUint16(body, true);
      const channels = view.getUint16(body + 2, true);
      const sampleRate = view.getUint32(body + 4, true);
      const bitsPerSample = view.getUint16(body + 14, true);
      if (options.uncompressedOnly === true && !UNCOMPRESSED.has(format)) return null;
      // For uncompressed samples the rate follows from the sample format, as decoders compute it:
      // the byte-rate field repeats it, and a wrong one (left at 0, or forged) must not change the
      // length. For compressed formats it is the only rate there is.
      byteRate = UNCOMPRESSED.has(format) ? (sampleRate * channels * bitsPerSample) / 8 : view.getUint32(body + 8, true);
      if (byteRate === 0) return null;
    } else if (id === 'data') {
      if (byteRate === null) return null;
      const available = Math.max(0, totalBytes - body);
      // A size past the end of the file is a truncated upload: bill only what is there.
      const dataBytes = size === 0 || size === UNKNOWN_SIZE ? available : Math.min(size, available);
      return dataBytes / byteRate;
    }
    if (size === UNKNOWN_SIZE) return null;
    offset = body + size + (size % 2); // chunks are padded to an even length
  }
  return null;
}

/** Seconds of headerless 16-bit mono PCM (OpenAI's `pcm` is 24 kHz). */
export function pcmDurationSeconds(bytes: number, sampleRate = OPENAI_PCM_SAMPLE_RATE): number {
  return bytes / (sampleRate * PCM_BYTES_PER_SAMPLE);
}
