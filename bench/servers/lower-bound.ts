/**
 * The lower bound a Node gateway cannot beat: node:http plus an undici pool, parsing the request
 * JSON (a gateway must, to route) and the response's usage (to account), piping streams as bytes.
 * Usage: node lower-bound.js PORT UPSTREAM_ORIGIN
 */
import { createServer } from 'node:http';
import { Pool } from 'undici';

const pool = new Pool(process.argv[3] as string, { connections: 256, keepAliveTimeout: 60_000 });

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    void (async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; stream?: boolean };
        body.model = 'bench-upstream';
        const upstream = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        if (body.stream === true) {
          res.writeHead(upstream.statusCode, { 'content-type': 'text/event-stream' });
          for await (const chunk of upstream.body) res.write(chunk);
          res.end();
          return;
        }
        const text = await upstream.body.text();
        const usage = (JSON.parse(text) as { usage?: unknown }).usage;
        if (usage === undefined) throw new Error('no usage');
        res.writeHead(upstream.statusCode, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      } catch (err) {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(err), type: 'provider_error', param: null, code: null } }));
      }
    })();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2]), '127.0.0.1');

// Exit normally on a signal, so that --cpu-prof and similar tools can write their output.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
