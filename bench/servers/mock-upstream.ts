/**
 * The benchmark's upstream: speaks OpenAI chat completions with zero added latency. A fixed small
 * completion with usage, or with `stream: true` 20 content chunks, a finish chunk, a usage chunk
 * when asked, and [DONE]. Usage: node mock-upstream.js PORT
 */
import { createServer } from 'node:http';

const WORDS = 'The quick brown fox jumps over the lazy dog while the gateway relays every token without delay ok'.split(' ');
const created = Math.floor(Date.now() / 1000);
const head = `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":${created},"model":"bench-upstream"`;
const usage = `{"prompt_tokens":12,"completion_tokens":${WORDS.length},"total_tokens":${12 + WORDS.length}}`;

const completion = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created,
  model: 'bench-upstream',
  choices: [{ index: 0, message: { role: 'assistant', content: WORDS.join(' '), refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: JSON.parse(usage) as unknown,
  system_fingerprint: 'fp_bench',
});

function streamBody(includeUsage: boolean): string {
  const u = includeUsage ? ',"usage":null' : '';
  let out = `data: ${head},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]${u}}\n\n`;
  for (const [i, word] of WORDS.entries()) {
    out += `data: ${head},"choices":[{"index":0,"delta":{"content":${JSON.stringify(i === 0 ? word : ` ${word}`)}},"logprobs":null,"finish_reason":null}]${u}}\n\n`;
  }
  out += `data: ${head},"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]${u}}\n\n`;
  if (includeUsage) out += `data: ${head},"choices":[],"usage":${usage}}\n\n`;
  return `${out}data: [DONE]\n\n`;
}
const streams = { withUsage: streamBody(true), withoutUsage: streamBody(false) };

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let body: { stream?: boolean; stream_options?: { include_usage?: boolean } } = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"bad json","type":"invalid_request_error","param":null,"code":null}}');
      return;
    }
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(body.stream_options?.include_usage === true ? streams.withUsage : streams.withoutUsage);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
    res.end(completion);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2]), '127.0.0.1');

// Exit normally on a signal, so that --cpu-prof and similar tools can write their output.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
