/**
 * The benchmark's upstream: speaks OpenAI chat completions with zero added latency. A fixed small
 * completion with usage, or with `stream: true` 20 content chunks, a finish chunk, a usage chunk
 * when asked, and [DONE]. Usage: node mock-upstream.js PORT
 */
import { createServer } from 'node:http';
import { completion, streamBody } from './mock-answers.js';

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
