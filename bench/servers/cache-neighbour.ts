/**
 * A noisy neighbour for `npm run bench -- --neighbour`: walks a buffer far larger than the
 * processor's caches, writing one word of every 64-byte line, without end. Run on the other core
 * at the lowest priority, it takes little CPU from the load generator but evicts what the servers
 * under test keep in the shared cache and competes for memory bandwidth, as another guest on the
 * same host does at its busy moments. Usage: node cache-neighbour.js MEBIBYTES
 */
const mebibytes = Number(process.argv[2] ?? 256);
const words = new Float64Array((mebibytes * 1024 * 1024) / 8);
let sum = 0;
for (;;) {
  for (let i = 0; i < words.length; i += 8) {
    sum += words[i] as number;
    words[i] = sum;
  }
}
