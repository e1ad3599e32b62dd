/**
 * Audio is charged by its seconds once it is known; the credit hold taken before must cover what
 * the charge will be, or an account could be charged past what it holds (and overdrawn). What a
 * caller's own header says is never taken below what the file's size allows.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { toneWav } from '../../providers/mock/wav.js';
import type { InputFile } from '../../providers/types.js';
import { chargedFileSeconds, heldFileSeconds, measuredFileSeconds } from './audio-seconds.js';
import { speechOperation } from './speech.js';

function fileOf(bytes: Buffer, contentType: string): InputFile {
  return { filename: 'a', contentType, size: bytes.length, open: () => Promise.resolve(Readable.from([bytes])) };
}

describe('audio credit holds', () => {
  it('hold a slow, short speech for its slowed-down lead-in, not one second', () => {
    const units = speechOperation.bound({ model: 'm', voice: 'alloy', input: 'a', speed: 0.25 }).units ?? 0;
    expect(units).toBeGreaterThanOrEqual(8);
  });

  it("hold a WAV transcription for the WAV's own duration, however low its byte rate", async () => {
    // 20 s at 400 samples a second, 16-bit: 16 KB, which a 128 kbit/s estimate would take for one second.
    const wav = fileOf(toneWav(20, 400), 'audio/wav');
    const measured = await measuredFileSeconds(wav);
    expect(measured).toBeCloseTo(20, 1);
    expect(heldFileSeconds(wav, measured)).toBeCloseTo(20, 1);
  });

  it('hold a WAV whose header claims a very high rate for no less than its size at the highest real one', () => {
    const wav = fileOf(Buffer.alloc(3_840_000), 'audio/wav');
    expect(heldFileSeconds(wav, 0.001)).toBe(10);
  });

  it('charge a WAV whose header claims a very high rate no less than its size at the highest real one', () => {
    const wav = fileOf(Buffer.alloc(3_840_000), 'audio/wav');
    expect(chargedFileSeconds(wav, 0.001)).toBe(10);
    expect(chargedFileSeconds(wav, 12)).toBe(12);
  });

  it('measure no WAV of compressed samples by its header, and charge it by its size at 128 kbit/s', async () => {
    const bytes = toneWav(4);
    bytes.writeUInt16LE(0x0055, 20);
    bytes.writeUInt32LE(0xffffffff, 28);
    const wav = fileOf(Buffer.concat([bytes, Buffer.alloc(80_000 - bytes.length)]), 'audio/wav');
    const measured = await measuredFileSeconds(wav);
    expect(measured).toBeUndefined();
    expect(chargedFileSeconds(wav, measured)).toBe(5);
  });

  it('hold a compressed file at a low bitrate: four times the usual estimate', async () => {
    const mp3 = fileOf(Buffer.alloc(160_000, 0xff), 'audio/mpeg');
    expect(await measuredFileSeconds(mp3)).toBeUndefined();
    expect(heldFileSeconds(mp3, undefined)).toBe(40);
  });
});
