/**
 * Turns an optional requested range into the exact inclusive byte range to read, with the same
 * rules on every backend (see BlobStore.read).
 */
import type { BlobRange } from './types.js';

/** For a whole read of an empty blob the result is { start: 0, end: -1 }: zero bytes. */
export function resolveRange(size: number, range: BlobRange | undefined): BlobRange {
  if (range === undefined) return { start: 0, end: size - 1 };
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || start > end) {
    throw new RangeError(`invalid byte range ${start}-${end}`);
  }
  if (start >= size) throw new RangeError(`byte range ${start}-${end} starts past the end of a ${size}-byte blob`);
  return { start, end: Math.min(end, size - 1) };
}
