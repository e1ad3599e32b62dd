/**
 * Uploads that stop arriving (`server.body_idle_timeout_ms`), black box over raw connections: a client
 * that sends its headers and then nothing, or stops halfway through its file, is answered 408
 * `request_body_timeout` once its body has been silent for the timeout; nothing of the upload is
 * kept (no blob, no file, no temporary file) and its connection and in-flight slot are given back.
 * A slow client that keeps sending is not cut. On the local blob store, and on PostgreSQL, whose
 * puts are received into a temporary file first.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { freshSchemaUrl, postgresAvailable } from '../support/postgres.js';
import { RawConnection } from '../support/raw-http.js';

// The PostgreSQL store spools into the system's temporary directory: this file's own, so that what
// is left in it is this file's doing.
const tmp = mkdtempSync(join(tmpdir(), 'tollgate-upload-stall-'));
process.env.TMPDIR = tmp;
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const IDLE_MS = 300;
const BOUNDARY = 'stall-boundary';
const ANNOUNCED = 1_000_000;

const pgAvailable = await postgresAvailable();

const backends = [
  { name: 'local', available: true },
  { name: 'postgres', available: pgAvailable },
];

function head(gw: RunningGateway, path: string, contentLength: number): string {
  return (
    `POST /v1${path} HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${gw.keys.main}\r\n` +
    `content-type: multipart/form-data; boundary=${BOUNDARY}\r\ncontent-length: ${contentLength}\r\n\r\n`
  );
}

function field(name: string, value: string): string {
  return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
}

function fileHead(name: string, filename: string, type: string): string {
  return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`;
}

const TAIL = `\r\n--${BOUNDARY}--\r\n`;

describe.each(backends)('an upload that stops arriving, blobs on $name', ({ name, available }) => {
  let gw: RunningGateway;
  let blobDir: string;
  let storageUrl: string | undefined;
  let admin: pg.Client | undefined;

  beforeAll(async () => {
    if (!available) return;
    blobDir = mkdtempSync(join(tmp, 'blobs-'));
    const storage = name === 'postgres' ? { storage: { url: (storageUrl = await freshSchemaUrl()) }, blobs: { backend: 'postgres' } } : { blobs: { directory: blobDir } };
    gw = await startGateway({
      config: {
        ...storage,
        // One request in flight at a time: a stalled upload holding its slot shows at once.
        server: { max_in_flight: 1, body_idle_timeout_ms: IDLE_MS },
        models: [
          { id: 'whisper', capabilities: ['transcription'], context_window: 4096, routes: [{ provider: 'mock', model: 'whisper-1' }] },
          { id: 'sora', capabilities: ['video'], context_window: 4096, routes: [{ provider: 'mock', model: 'sora-2' }] },
        ],
      },
    });
    if (storageUrl !== undefined) {
      const url = new URL(storageUrl);
      const schema = url.searchParams.get('schema')!;
      url.searchParams.delete('schema');
      admin = new pg.Client({ connectionString: url.toString(), options: `-c search_path=${schema}` });
      await admin.connect();
    }
  });

  afterAll(async () => {
    await gw?.close();
    await admin?.end();
  });

  /** Everything an upload could have left: blobs (rows or files), file records, spooled temporary files. */
  async function leftovers(): Promise<Record<string, unknown>> {
    const files = (await (await fetch(`${gw.baseURL}/files`, { headers: { authorization: `Bearer ${gw.keys.main}` } })).json()) as { data: unknown[] };
    const spooled = readdirSync(tmp).filter((entry) => entry.startsWith('tollgate-spool-'));
    const blobs = admin === undefined ? readdirSync(blobDir) : (await admin.query('select id from blobs')).rows;
    return { files: files.data, spooled, blobs };
  }

  const nothing = { files: [], spooled: [], blobs: [] };

  it.runIf(available)('answers 408 to a client that sends its headers and then nothing, and closes the connection', async () => {
    const conn = await RawConnection.open(gw.url);
    const started = Date.now();
    conn.write(head(gw, '/files', ANNOUNCED));
    const res = await conn.response(5_000);
    const waited = Date.now() - started;
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toEqual({
      error: { message: `No byte of the request body arrived for ${IDLE_MS} ms; nothing of it was kept.`, type: 'timeout_error', param: null, code: 'request_body_timeout' },
    });
    expect(res.headers).toMatchObject({ connection: 'close', 'x-should-retry': 'true' });
    expect(waited).toBeGreaterThanOrEqual(IDLE_MS - 20);
    expect(waited).toBeLessThan(IDLE_MS * 4);
    await conn.closed(2_000);
    expect(await leftovers()).toEqual(nothing);
  });

  it.runIf(available)('ends a file stopped halfway: nothing of it kept, its in-flight slot given back', async () => {
    const conn = await RawConnection.open(gw.url);
    conn.write(head(gw, '/files', ANNOUNCED));
    conn.write(field('purpose', 'user_data') + fileHead('file', 'half.bin', 'application/octet-stream'));
    conn.write(Buffer.alloc(300_000, 7));
    await new Promise((r) => setTimeout(r, 100));
    // While it stalls it holds the instance's one slot.
    const busy = await fetch(`${gw.baseURL}/models`, { headers: { authorization: `Bearer ${gw.keys.main}` } });
    expect([busy.status, ((await busy.json()) as { error: { code: string } }).error.code]).toEqual([503, 'gateway_overloaded']);

    const res = await conn.response(5_000);
    expect([res.status, (JSON.parse(res.body) as { error: { code: string } }).error.code]).toEqual([408, 'request_body_timeout']);
    await conn.closed(2_000);
    expect(await leftovers()).toEqual(nothing);
    expect((await fetch(`${gw.baseURL}/models`, { headers: { authorization: `Bearer ${gw.keys.main}` } })).status).toBe(200);
  });

  it.runIf(available)('ends a transcription\'s audio and a video\'s reference stopped halfway alike', async () => {
    const cases = [
      { path: '/audio/transcriptions', fields: field('model', 'whisper'), file: fileHead('file', 'talk.wav', 'audio/wav') },
      { path: '/videos', fields: field('model', 'sora') + field('prompt', 'a cat'), file: fileHead('input_reference', 'ref.png', 'image/png') },
    ];
    for (const { path, fields, file } of cases) {
      const conn = await RawConnection.open(gw.url);
      conn.write(head(gw, path, ANNOUNCED) + fields + file);
      conn.write(Buffer.alloc(100_000, 1));
      const res = await conn.response(5_000);
      expect([path, res.status, (JSON.parse(res.body) as { error: { code: string } }).error.code]).toEqual([path, 408, 'request_body_timeout']);
      await conn.closed(2_000);
    }
    expect(await leftovers()).toEqual(nothing);
  });

  // Local only: a kept upload is a large object, which the PostgreSQL blob store's own tests count
  // database-wide, maybe at the same moment. The timeout is the same on both.
  // Registered for the local store only, not skipped for the other.
  if (name === 'local') it.runIf(available)('lets a slow upload that keeps sending run past the timeout', async () => {
    const pieces = 10;
    const piece = Buffer.alloc(10_000, 3);
    const prefix = field('purpose', 'user_data') + fileHead('file', 'slow.bin', 'application/octet-stream');
    const conn = await RawConnection.open(gw.url);
    conn.write(head(gw, '/files', Buffer.byteLength(prefix) + pieces * piece.length + Buffer.byteLength(TAIL)) + prefix);
    // A piece every half of the timeout: the whole takes well over the timeout, no gap reaches it.
    for (let n = 0; n < pieces; n++) {
      await new Promise((r) => setTimeout(r, IDLE_MS / 2));
      conn.write(piece);
    }
    conn.write(TAIL);
    const res = await conn.response(5_000);
    expect(res.status).toBe(200);
    const file = JSON.parse(res.body) as { id: string; bytes: number };
    expect(file.bytes).toBe(pieces * piece.length);
    conn.destroy();
    const deleted = await fetch(`${gw.baseURL}/files/${file.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${gw.keys.main}` } });
    expect(deleted.status).toBe(200);
    expect(await leftovers()).toEqual(nothing);
  });
});
