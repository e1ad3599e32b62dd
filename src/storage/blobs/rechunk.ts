/**
 * Regroups a stream of chunks of any size into chunks of exactly `size` bytes (the last may be
 * shorter). PostgreSQL large objects are written one statement per chunk, so tiny network chunks
 * would cost a round trip each, and one huge chunk would be one huge statement; this bounds both
 * while holding at most one chunk of `size` bytes.
 */
export async function* rechunk(source: AsyncIterable<Uint8Array>, size: number): AsyncGenerator<Uint8Array> {
  let pending = Buffer.allocUnsafe(size);
  let filled = 0;
  for await (const chunk of source) {
    let offset = 0;
    while (offset < chunk.length) {
      if (filled === 0 && chunk.length - offset >= size) {
        // Already big enough: hand on a view instead of copying.
        yield chunk.subarray(offset, offset + size);
        offset += size;
        continue;
      }
      const take = Math.min(size - filled, chunk.length - offset);
      pending.set(chunk.subarray(offset, offset + take), filled);
      filled += take;
      offset += take;
      if (filled === size) {
        yield pending;
        // A fresh buffer, so a consumer that keeps the chunk it was given never sees it change.
        pending = Buffer.allocUnsafe(size);
        filled = 0;
      }
    }
  }
  if (filled > 0) yield pending.subarray(0, filled);
}
