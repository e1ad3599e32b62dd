import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Cancellation } from '../util/cancellation.js';
import { END_HOLD_MS, writeFrames } from './stream-writer.js';

/** How many times the socket under `res` handed data to the system: each is a write() or writev(). */
function countFlushes(res: ServerResponse): () => number {
  const socket = res.socket as Socket & { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };
  let flushes = 0;
  for (const method of ['_write', '_writev'] as const) {
    const original = socket[method].bind(socket);
    socket[method] = (...args: unknown[]) => {
      flushes++;
      original(...args);
    };
  }
  return () => flushes;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve()))));

/**
 * Serves one response written by writeFrames; resolves with what the client read, how long after
 * its first bytes the last came, and how many flushes it took.
 */
async function serve(frames: () => AsyncIterable<string | Uint8Array>, ending?: () => boolean): Promise<{ body: string; spreadMs: number; flushes: number; completed: boolean }> {
  let result: { flushes: number; completed: boolean } | undefined;
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const flushes = countFlushes(res);
    void writeFrames(res, frames(), new Cancellation().signal, false, ending).then((completed) => {
      result = { flushes: flushes(), completed };
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let first = 0;
  const body = await new Promise<string>((resolve, reject) => {
    request({ port, host: '127.0.0.1', path: '/' }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (text === '') first = performance.now();
        text += chunk;
      });
      res.on('end', () => resolve(text));
    })
      .on('error', reject)
      .end();
  });
  const spreadMs = performance.now() - first;
  await pause(5);
  if (result === undefined) throw new Error('writeFrames did not finish');
  return { body, spreadMs, ...result };
}

describe('writeFrames', () => {
  it('holds the cork while only the last frame is awaited, and sends the rest with the end in one write', async () => {
    let ending = false;
    const { body, flushes, completed } = await serve(async function* () {
      yield 'data: a\n\n';
      yield Buffer.from('data: b\n\n');
      ending = true;
      // The charge's commit, several event-loop turns long but shorter than the hold.
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
      yield 'data: [DONE]\n\n';
    }, () => ending);
    expect(completed).toBe(true);
    expect(body).toBe('data: a\n\ndata: b\n\ndata: [DONE]\n\n');
    expect(flushes).toBe(1);
  });

  it('sends the held events after END_HOLD_MS when the last frame is late (a slow commit)', async () => {
    let ending = false;
    const { body, spreadMs, flushes } = await serve(async function* () {
      yield 'data: a\n\n';
      ending = true;
      await pause(END_HOLD_MS + 60);
      yield 'data: [DONE]\n\n';
    }, () => ending);
    expect(body).toBe('data: a\n\ndata: [DONE]\n\n');
    expect(flushes).toBe(2);
    // The event reached the client long before the end did.
    expect(spreadMs).toBeGreaterThan(40);
  });

  it('sends what one turn wrote at the end of that turn when the stream is not ending', async () => {
    const { body, flushes } = await serve(async function* () {
      yield 'data: a\n\n';
      yield 'data: b\n\n';
      await pause(20);
      yield 'data: [DONE]\n\n';
    });
    expect(body).toBe('data: a\n\ndata: b\n\ndata: [DONE]\n\n');
    // The first turn's frames, then the last frame with the end of the response.
    expect(flushes).toBe(2);
  });

  it('sends a held frame larger than the socket buffer at once instead of waiting for a drain that cannot come', async () => {
    let ending = false;
    const large = `data: ${'x'.repeat(256 * 1024)}\n\n`;
    const { body, completed } = await serve(async function* () {
      ending = true;
      yield large;
      await pause(20);
      yield 'data: [DONE]\n\n';
    }, () => ending);
    expect(completed).toBe(true);
    expect(body).toBe(`${large}data: [DONE]\n\n`);
  });
});
