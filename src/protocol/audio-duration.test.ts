import { describe, expect, it } from 'vitest';
import { pcmDurationSeconds, wavDurationSeconds } from './audio-duration.js';

function chunk(id: string, body: Buffer, declaredSize = body.length): Buffer {
  const head = Buffer.alloc(8);
  head.write(id, 0, 'ascii');
  head.writeUInt32LE(declaredSize, 4);
  return Buffer.concat([head, body, Buffer.alloc(body.length % 2)]);
}

function fmt(sampleRate: number, channels: number, bitsPerSample: number): Buffer {
  const body = Buffer.alloc(16);
  const blockAlign = (channels * bitsPerSample) / 8;
  body.writeUInt16LE(1, 0);
  body.writeUInt16LE(channels, 2);
  body.writeUInt32LE(sampleRate, 4);
  body.writeUInt32LE(sampleRate * blockAlign, 8);
  body.writeUInt16LE(blockAlign, 12);
  body.writeUInt16LE(bitsPerSample, 14);
  return chunk('fmt ', body);
}

/** A WAV built from chunks, as an encoder other than ours might lay it out. */
function wav(...chunks: Buffer[]): Buffer {
  const body = Buffer.concat([Buffer.from('WAVE', 'ascii'), ...chunks]);
  const head = Buffer.alloc(8);
  head.write('RIFF', 0, 'ascii');
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
}

describe('wavDurationSeconds', () => {
  it('reads a canonical 44-byte-header WAV', () => {
    const file = wav(fmt(8000, 1, 16), chunk('data', Buffer.alloc(8000 * 2 * 3)));
    expect(file.indexOf('data')).toBe(36);
    expect(wavDurationSeconds(file, file.length)).toBe(3);
  });

  it('accounts for channels and sample size through the byte rate', () => {
    const file = wav(fmt(44100, 2, 16), chunk('data', Buffer.alloc(44100 * 4)));
    expect(wavDurationSeconds(file, file.length)).toBe(1);
  });

  it('takes the rate of uncompressed samples from their format, not from a byte-rate field that says otherwise', () => {
    const forged = fmt(16_000, 1, 16);
    forged.writeUInt32LE(0xffffffff, 8 + 8); // the byte-rate field, after the chunk's 8-byte head
    const file = wav(forged, chunk('data', Buffer.alloc(64_000)));
    expect(wavDurationSeconds(file, file.length)).toBe(2);
    forged.writeUInt32LE(0, 8 + 8);
    const zero = wav(forged, chunk('data', Buffer.alloc(64_000)));
    expect(wavDurationSeconds(zero, zero.length)).toBe(2);
  });

  it('walks past a LIST chunk (odd-sized, so padded) before data', () => {
    const list = chunk('LIST', Buffer.from('INFOISFT\x05\x00\x00\x00mock\x00', 'binary'));
    const file = wav(fmt(16000, 1, 16), list, chunk('data', Buffer.alloc(16000)));
    expect(wavDurationSeconds(file, file.length)).toBe(0.5);
  });

  it('measures a streamed WAV (data size 0xFFFFFFFF or 0) to the end of the file, from the header alone', () => {
    const audio = Buffer.alloc(24000 * 2 * 2);
    for (const declared of [0xffffffff, 0]) {
      const file = wav(fmt(24000, 1, 16), chunk('data', audio, declared));
      expect(wavDurationSeconds(file.subarray(0, 64), file.length)).toBe(2);
    }
  });

  it('counts only the bytes that are there when the declared data size runs past the end', () => {
    const file = wav(fmt(8000, 1, 16), chunk('data', Buffer.alloc(8000), 8000 * 100));
    expect(wavDurationSeconds(file, file.length)).toBe(0.5);
  });

  it('answers null for anything that is not a readable WAV', () => {
    expect(wavDurationSeconds(Buffer.from('ID3\x04 this is an mp3, honest'), 1000)).toBeNull();
    expect(wavDurationSeconds(Buffer.alloc(0), 0)).toBeNull();
    expect(wavDurationSeconds(Buffer.from('RIFF\x00\x00\x00\x00AVI LIST'), 100)).toBeNull();
    const noFmt = wav(chunk('data', Buffer.alloc(100)));
    expect(wavDurationSeconds(noFmt, noFmt.length)).toBeNull();
    const cutBeforeData = wav(fmt(8000, 1, 16), chunk('LIST', Buffer.alloc(5000)), chunk('data', Buffer.alloc(10)));
    expect(wavDurationSeconds(cutBeforeData.subarray(0, 4096), cutBeforeData.length)).toBeNull();
  });
});

describe('pcmDurationSeconds', () => {
  it("uses OpenAI's 24 kHz 16-bit mono by default", () => {
    expect(pcmDurationSeconds(48000)).toBe(1);
    expect(pcmDurationSeconds(16000, 8000)).toBe(1);
  });
});
