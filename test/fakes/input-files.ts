/**
 * Uploaded files for adapter tests, standing in for the blob store's InputFile. Their bytes are
 * produced on demand and counted, so a test can tell whether a file was streamed (read as it is
 * sent) or read whole up front, and whether an abandoned upload closed it.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { InputFile } from '../../src/providers/types.js';

export interface TestInputFile extends InputFile {
  /** Bytes handed out so far, over all opens. */
  readonly produced: number;
  /** Every stream open() returned, in order. */
  readonly streams: readonly Readable[];
}

const CHUNK = 64 * 1024;

/** A file holding `bytes`. */
export function bytesFile(bytes: Buffer, filename = 'speech.wav', contentType = 'audio/wav'): TestInputFile {
  return generatedFile(bytes.length, filename, contentType, (offset, length) => bytes.subarray(offset, offset + length));
}

/**
 * A file of `size` deterministic bytes, produced in 64 kB chunks as they are read; `declaredSize`
 * lets a test lie about its size.
 */
export function generatedFile(
  size: number,
  filename = 'long.wav',
  contentType = 'audio/wav',
  bytesAt: (offset: number, length: number) => Buffer = patternBytes,
  declaredSize = size,
): TestInputFile {
  const streams: Readable[] = [];
  const file = {
    filename,
    contentType,
    size: declaredSize,
    produced: 0,
    streams,
    open(): Promise<NodeJS.ReadableStream> {
      let offset = 0;
      const stream = new Readable({
        read() {
          if (offset >= size) {
            this.push(null);
            return;
          }
          const chunk = bytesAt(offset, Math.min(CHUNK, size - offset));
          offset += chunk.length;
          file.produced += chunk.length;
          this.push(chunk);
        },
      });
      streams.push(stream);
      return Promise.resolve(stream);
    },
  };
  return file;
}

/** A file that delivers `first` and then nothing more, ever: an upload stuck mid-way. */
export function stalledFile(first: Buffer, declaredSize: number, filename = 'stuck.wav'): TestInputFile {
  const streams: Readable[] = [];
  const file = {
    filename,
    contentType: 'audio/wav',
    size: declaredSize,
    produced: 0,
    streams,
    open(): Promise<NodeJS.ReadableStream> {
      let sent = false;
      const stream = new Readable({
        read() {
          if (sent) return;
          sent = true;
          file.produced += first.length;
          this.push(first);
        },
      });
      streams.push(stream);
      return Promise.resolve(stream);
    },
  };
  return file;
}

/** Bytes that differ from chunk to chunk, so a reordered or repeated chunk changes the hash. */
export function patternBytes(offset: number, length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = ((offset + i) * 31 + Math.floor((offset + i) / 4096)) & 0xff;
  return bytes;
}

/** Hex SHA-256 of what `generatedFile(size)` holds, computed chunk by chunk. */
export function generatedSha256(size: number, bytesAt: (offset: number, length: number) => Buffer = patternBytes): string {
  const hash = createHash('sha256');
  for (let offset = 0; offset < size; offset += CHUNK) hash.update(bytesAt(offset, Math.min(CHUNK, size - offset)));
  return hash.digest('hex');
}
