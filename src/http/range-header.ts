/**
 * The `Range` request header (RFC 9110 §14), for one range of bytes: `bytes=a-b`, `bytes=a-` and
 * `bytes=-n` (the last n). Several ranges, other units or a malformed header are ignored (the
 * whole content is sent, as the RFC allows); a range that starts past the end is unsatisfiable.
 */
export type RangeRequest = { start: number; end: number } | 'unsatisfiable' | null;

export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return null;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (match === null) return null;
  const [, first, last] = match as unknown as [string, string, string];
  if (first === '' && last === '') return null;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return 'unsatisfiable';
    return size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
