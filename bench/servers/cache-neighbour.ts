/**
 * A noisy neighbour for `npm run bench -- --neighbour`: walks a buffer far larger than the
 * processor's caches, adding one to a byte of every 64-byte line, without end. Run on the other
 * core at the lowest priority, it takes little CPU from the load generator but evicts what the
 * servers under test keep in the shared cache and competes for memory bandwidth, as another guest
 * on the same host does at its busy moments. Each line's update stands alone (no sum carried from
 * one to the next), so the walk waits on memory, not on arithmetic: about 75–84 passes a second over
 * 256 MiB here, against 32 for a running floating-point sum and 93 for the same walk in C.
 * Usage: node cache-neighbour.js MEBIBYTES
 */
const LINE_BYTES = 64;
const bytes = new Uint8Array(Number(process.argv[2] ?? 256) * 1024 * 1024);

function pass(): void {
  for (let i = 0; i < bytes.length; i += LINE_BYTES) bytes[i] = ((bytes[i] as number) + 1) & 0xff;
}

for (;;) pass();
