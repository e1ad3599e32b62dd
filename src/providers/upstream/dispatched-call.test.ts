import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { UpstreamClient } from './upstream-client.js';
import { GatewayError } from '../../errors/index.js';
import { Cancellation } from '../../util/cancellation.js';

type Route = (req: IncomingMessage, res: ServerResponse) => void;

const routes: Record<string, Route> = {
  '/v1/small': (_req, res) => res.end('{"ok":true}'),
  '/v1/error': (_req, res) => {
    res.writeHead(429, { 'retry-after': '3', 'content-type': 'application/json' });
    res.end('{"error":{"message":"slow down"}}');
  },
  '/v1/declared-big': (_req, res) => {
    res.writeHead(200, { 'content-length': '5000' });
    res.end('y'.repeat(5000));
  },
  '/v1/chunked-big': (_req, res) => {
    res.write('z'.repeat(600));
    res.end('z'.repeat(600));
  },
  '/v1/chunks': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: 1\n\n');
    setTimeout(() => res.write('data: 2\n\n'), 10);
    setTimeout(() => res.end('data: [DONE]\n\n'), 20);
  },
  '/v1/large': (_req, res) => {
    // 32 MB in 64 KB writes: far more than the body queues before it pauses the connection, and
    // than loopback socket buffers hold (a few MB).
    const piece = 'x'.repeat(64 * 1024);
    let left = 512;
    const more = (): void => {
      while (left > 0) {
        left--;
        if (left === 0) return void res.end(piece);
        if (!res.write(piece)) return void res.once('drain', more);
      }
    };
    more();
  },
  '/v1/cut': (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: 1\n\n');
    setTimeout(() => req.socket.destroy(), 10);
  },
  '/v1/hang': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: 1\n\n');
  },
  '/v1/silent': () => undefined,
};

let server: Server;
let client: UpstreamClient;
const sockets = new Set<Socket>();
let written = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    const write = res.write.bind(res);
    res.write = ((chunk: string, ...rest: never[]) => {
      written += Buffer.byteLength(chunk);
      return write(chunk, ...rest);
    }) as typeof res.write;
    (routes[req.url ?? ''] ?? routes['/v1/small'])?.(req, res);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  client = new UpstreamClient({ baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, connectTimeoutMs: 1000, maxConnections: 1 });
});
afterAll(async () => {
  await client.close();
  for (const socket of sockets) socket.destroy();
  server.close();
});

const fresh = (): Cancellation => new Cancellation();

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  const err = await promise.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GatewayError);
  return err as GatewayError;
}

async function readAll(body: AsyncIterable<Buffer>): Promise<string> {
  let text = '';
  for await (const chunk of body) text += chunk.toString('utf8');
  return text;
}

describe('postForText', () => {
  it('resolves with the status, headers and whole body', async () => {
    const answer = await client.postForText('/small', '{}', {}, fresh().signal);
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('{"ok":true}');
  });

  it('resolves with an error status and its body for the adapter to map', async () => {
    const answer = await client.postForText('/error', '{}', {}, fresh().signal);
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('3');
    expect(answer.text).toContain('slow down');
  });

  it('refuses an answer whose declared length is over the cap, and one that grows over it', async () => {
    expect((await failure(client.postForText('/declared-big', '{}', {}, fresh().signal, 1000))).code).toBe('upstream_malformed_response');
    expect((await failure(client.postForText('/chunked-big', '{}', {}, fresh().signal, 1000))).code).toBe('upstream_malformed_response');
    // The pool's one connection is usable again afterwards.
    expect((await client.postForText('/small', '{}', {}, fresh().signal)).text).toBe('{"ok":true}');
  });

  it('fails with the abort reason when the signal is cancelled while waiting for the answer', async () => {
    const cancellation = fresh();
    const pending = client.postForText('/silent', '{}', {}, cancellation.signal);
    setTimeout(() => cancellation.abort(new GatewayError('upstream_timeout', 'too slow')), 20);
    const err = await failure(pending);
    expect(err.code).toBe('upstream_timeout');
    expect(err.message).toBe('too slow');
  });

  it('fails at once with a signal already cancelled, and a call still queued fails when cancelled', async () => {
    const gone = fresh();
    gone.abort();
    expect((await failure(client.postForText('/small', '{}', {}, gone.signal))).code).toBe('upstream_unreachable');

    // maxConnections is 1: the second call waits in the pool's queue behind the first.
    const first = fresh();
    const blocking = client.postForText('/silent', '{}', {}, first.signal);
    const queued = fresh();
    const waiting = client.postForText('/small', '{}', {}, queued.signal);
    await new Promise((r) => setTimeout(r, 20));
    queued.abort(new GatewayError('generation_timeout', 'budget spent'));
    expect((await failure(waiting)).code).toBe('generation_timeout');
    first.abort();
    await failure(blocking);
    expect((await client.postForText('/small', '{}', {}, fresh().signal)).text).toBe('{"ok":true}');
  });

  it('maps a closed port to upstream_unreachable', async () => {
    const closed = new UpstreamClient({ baseUrl: 'http://127.0.0.1:1/v1', connectTimeoutMs: 1000, maxConnections: 1 });
    expect((await failure(closed.postForText('/x', '{}', {}, fresh().signal))).code).toBe('upstream_unreachable');
    await closed.close();
  });
});

describe('postForStream', () => {
  it('resolves at the status line and yields chunks as they arrive', async () => {
    const answer = await client.postForStream('/chunks', '{}', {}, fresh().signal);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/event-stream');
    expect(await readAll(answer.body)).toBe('data: 1\n\ndata: 2\n\ndata: [DONE]\n\n');
  });

  it('pauses the upstream while the reader falls behind, and loses nothing', async () => {
    written = 0;
    const answer = await client.postForStream('/large', '{}', {}, fresh().signal);
    await new Promise((r) => setTimeout(r, 100));
    // Unread, the body holds about its high-water mark plus what the sockets buffer, not 32 MB.
    expect(written).toBeLessThan(16 * 1024 * 1024);
    expect((await readAll(answer.body)).length).toBe(512 * 64 * 1024);
  });

  it('reads an error body as text, within a cap', async () => {
    const answer = await client.postForStream('/error', '{}', {}, fresh().signal);
    expect(answer.status).toBe(429);
    expect(await answer.body.text(1000)).toContain('slow down');
    const big = await client.postForStream('/declared-big', '{}', {}, fresh().signal);
    expect((await failure(big.body.text(1000))).code).toBe('upstream_malformed_response');
  });

  it('discard() lets the answer finish so the connection is reused; leaving a loop early keeps the body', async () => {
    const answer = await client.postForStream('/chunks', '{}', {}, fresh().signal);
    for await (const chunk of answer.body) {
      expect(chunk.toString()).toBe('data: 1\n\n');
      break;
    }
    answer.body.discard();
    const before = [...sockets];
    expect((await client.postForText('/small', '{}', {}, fresh().signal)).text).toBe('{"ok":true}');
    expect([...sockets]).toEqual(before);
  });

  it('destroy() gives a connection up that would otherwise never finish', async () => {
    const answer = await client.postForStream('/hang', '{}', {}, fresh().signal);
    const [socket] = [...sockets];
    answer.body.destroy();
    await once(socket as Socket, 'close');
    expect((await client.postForText('/small', '{}', {}, fresh().signal)).text).toBe('{"ok":true}');
  });

  it('a connection cut mid-answer fails the read with the transport error, for the reader to map', async () => {
    const answer = await client.postForStream('/cut', '{}', {}, fresh().signal);
    const err = await readAll(answer.body).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(GatewayError);
  });

  it('a cancelled signal ends the read with its reason and closes the connection', async () => {
    const cancellation = fresh();
    const answer = await client.postForStream('/hang', '{}', {}, cancellation.signal);
    const [socket] = [...sockets];
    const reading = readAll(answer.body).then(
      () => null,
      (e: unknown) => e,
    );
    const reason = new GatewayError('upstream_timeout', 'idle');
    cancellation.abort(reason);
    expect(await reading).toBe(reason);
    await once(socket as Socket, 'close');
  });
});
