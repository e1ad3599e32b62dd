/**
 * Uploads (POST /v1/files and friends), black box: the official SDK against a listening gateway;
 * a file over the limit refused with 413 while it is still arriving (nothing of it kept); a
 * several-hundred-MB upload streamed through without growing the process's memory; listing,
 * content with ranges, deletion, and another account's file answering 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { startGateway, errorOf, type RunningGateway } from '../support/gateway-harness.js';

const LIMIT = 400 * 1024 * 1024;
const BIG = 300 * 1024 * 1024;
/** The limit of a second gateway, where crossing the limit while streaming takes little time. */
const SMALL_LIMIT = 8 * 1024 * 1024;

let gw: RunningGateway;
let small: RunningGateway;
let client: OpenAI;
let blobDir: string;

beforeAll(async () => {
  blobDir = mkdtempSync(join(tmpdir(), 'tollgate-uploads-'));
  gw = await startGateway({
    accounts: { acct: 'standard', other: 'standard' },
    keys: { main: { account: 'acct' }, other: { account: 'other' } },
    config: { blobs: { directory: blobDir }, uploads: { max_bytes: LIMIT, content_types: ['audio/*', 'image/*', 'video/*', 'application/octet-stream'] } },
  });
  client = new OpenAI({ apiKey: gw.keys.main!, baseURL: gw.baseURL, maxRetries: 0 });
  small = await startGateway({ config: { blobs: { directory: blobDir }, uploads: { max_bytes: SMALL_LIMIT } } });
});

afterAll(async () => {
  await gw?.close();
  await small?.close();
  rmSync(blobDir, { recursive: true, force: true });
});

/** Blob files on disk (the store's temporary files included). */
function storedBlobs(): string[] {
  const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [e.name]));
  return walk(blobDir);
}

interface StreamedUpload {
  status: number;
  body: string;
  /** Bytes of the file written when the answer arrived. */
  writtenAtAnswer: number;
}

/**
 * Streams a multipart upload of `size` bytes (one reused chunk, so the sender holds no copy) with
 * chunked encoding; stops writing as soon as an answer arrives, as a well-behaved client does.
 */
function streamUpload(size: number, target: RunningGateway = gw): Promise<StreamedUpload> {
  const key = target.keys.main!;
  const boundary = 'tollgate-test-boundary';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(1024 * 1024, 0x5a);
  return new Promise((resolve, reject) => {
    let written = 0;
    let answered = false;
    const req = httpRequest(`${target.baseURL}/files`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` } }, (res) => {
      answered = true;
      const writtenAtAnswer = written;
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8'), writtenAtAnswer }));
    });
    req.on('error', (err) => (answered ? undefined : reject(err)));
    req.write(head);
    const pump = (): void => {
      while (!answered && written < size) {
        const piece = chunk.subarray(0, Math.min(chunk.length, size - written));
        written += piece.length;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      if (!answered) req.end(tail);
    };
    pump();
  });
}

describe('POST /v1/files', () => {
  it('stores an upload and serves it back to its account only', async () => {
    const bytes = Buffer.from('RIFF0000WAVEfmt some audio bytes');
    const file = await client.files.create({ file: await toFile(bytes, 'note.wav', { type: 'audio/wav' }), purpose: 'user_data' });
    expect(file).toMatchObject({ object: 'file', bytes: bytes.length, filename: 'note.wav', purpose: 'user_data', status: 'processed' });
    expect(file.id).toMatch(/^file-[0-9a-f]{24}$/);
    expect(await client.files.retrieve(file.id)).toMatchObject({ id: file.id, bytes: bytes.length });
    const content = await client.files.content(file.id);
    expect(Buffer.from(await content.arrayBuffer())).toEqual(bytes);
    const range = await fetch(`${gw.baseURL}/files/${file.id}/content`, { headers: { authorization: `Bearer ${gw.keys.main}`, range: 'bytes=0-3' } });
    expect([range.status, await range.text()]).toEqual([206, 'RIFF']);

    const other = new OpenAI({ apiKey: gw.keys.other!, baseURL: gw.baseURL, maxRetries: 0 });
    await expect(other.files.retrieve(file.id)).rejects.toMatchObject({ status: 404, code: 'file_not_found' });
    await expect(other.files.delete(file.id)).rejects.toMatchObject({ status: 404 });
  });

  it('keeps a file for the lifetime expires_after asks, within the gateway\'s retention, and refuses fields it does not know', async () => {
    const hour = await client.files.create({ file: await toFile(Buffer.from([1]), 'h.bin'), purpose: 'user_data', expires_after: { anchor: 'created_at', seconds: 3600 } });
    expect(hour.expires_at! - hour.created_at).toBe(3600);
    const send = (fields: Record<string, string>) => {
      const form = new FormData();
      form.set('purpose', 'user_data');
      for (const [name, value] of Object.entries(fields)) form.set(name, value);
      form.set('file', new Blob([new Uint8Array([1])]), 'x.bin');
      return fetch(`${gw.baseURL}/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}` }, body: form });
    };
    for (const [fields, param] of [
      [{ 'expires_after[anchor]': 'last_active_at', 'expires_after[seconds]': '3600' }, 'expires_after[anchor]'],
      [{ 'expires_after[anchor]': 'created_at', 'expires_after[seconds]': '60' }, 'expires_after[seconds]'],
      [{ 'expires_after[anchor]': 'created_at' }, 'expires_after[seconds]'],
      [{ ttl: '3600' }, 'ttl'],
    ] as const) {
      const refused = await errorOf(await send(fields));
      expect([refused.status, refused.body.error.param]).toEqual([400, param]);
    }
  });

  it('lists the files of one purpose when asked, and pages of up to 10,000, as OpenAI\'s files list does', async () => {
    const batch = await client.files.create({ file: await toFile(Buffer.from('{}\n'), 'b.jsonl', { type: 'application/octet-stream' }), purpose: 'batch' });
    await client.files.create({ file: await toFile(Buffer.from([7]), 'u.bin'), purpose: 'user_data' });
    const page = await client.files.list({ purpose: 'batch', limit: 10_000 });
    expect(page.data.map((f) => f.id)).toEqual([batch.id]);
    const tooMany = await errorOf(await fetch(`${gw.baseURL}/files?limit=10001`, { headers: { authorization: `Bearer ${gw.keys.main}` } }));
    expect([tooMany.status, tooMany.body.error.param]).toEqual([400, 'limit']);
    const badPurpose = await errorOf(await fetch(`${gw.baseURL}/files?purpose=Batch%20jobs`, { headers: { authorization: `Bearer ${gw.keys.main}` } }));
    expect([badPurpose.status, badPurpose.body.error.param]).toEqual([400, 'purpose']);
  });

  it('takes the type of a part sent as application/octet-stream (SDK streams, curl -F) from its file name', async () => {
    const wav = await client.files.create({ file: await toFile(Buffer.from('RIFF0000WAVE'), 'clip.wav'), purpose: 'user_data' });
    const content = await fetch(`${gw.baseURL}/files/${wav.id}/content`, { headers: { authorization: `Bearer ${gw.keys.main}` } });
    expect(content.headers.get('content-type')).toBe('audio/wav');
    const unnamed = await client.files.create({ file: await toFile(Buffer.from([1]), 'blob'), purpose: 'user_data' });
    const raw = await fetch(`${gw.baseURL}/files/${unnamed.id}/content`, { headers: { authorization: `Bearer ${gw.keys.main}` } });
    expect(raw.headers.get('content-type')).toBe('application/octet-stream');
    // What the name says is checked like a declared type.
    const page = await errorOf(await fetch(`${gw.baseURL}/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}` }, body: (() => {
      const form = new FormData();
      form.set('purpose', 'user_data');
      form.set('file', new Blob(['<p>'], { type: 'application/octet-stream' }), 'page.html');
      return form;
    })() }));
    expect([page.status, page.body.error.param]).toEqual([400, 'file']);
  });

  it('lists files page by page, newest first, and deletes them', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await client.files.create({ file: await toFile(Buffer.from([i]), `f${i}.bin`), purpose: 'user_data' })).id);
    const page = await client.files.list({ limit: 2 });
    expect(page.data.map((f) => f.id)).toEqual([ids[2], ids[1]]);
    expect(page.hasNextPage()).toBe(true);
    const next = await page.getNextPage();
    expect(next.data[0]!.id).toBe(ids[0]);
    expect(await client.files.delete(ids[1]!)).toEqual({ id: ids[1], object: 'file', deleted: true });
    await expect(client.files.retrieve(ids[1]!)).rejects.toMatchObject({ status: 404 });
  });

  it('refuses a missing file or purpose, a file in another field, and a content type not allowed, naming the field', async () => {
    const form = (fields: Record<string, string | [Blob, string]>): FormData => {
      const f = new FormData();
      for (const [name, value] of Object.entries(fields)) {
        if (typeof value === 'string') f.set(name, value);
        else f.set(name, value[0], value[1]);
      }
      return f;
    };
    const send = (body: FormData) => fetch(`${gw.baseURL}/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}` }, body });
    const cases: Array<[FormData, number, string]> = [
      [form({ purpose: 'user_data' }), 400, 'file'],
      [form({ file: [new Blob(['x'], { type: 'audio/wav' }), 'a.wav'] }), 400, 'purpose'],
      [form({ purpose: 'user_data', attachment: [new Blob(['x'], { type: 'audio/wav' }), 'a.wav'] }), 400, 'attachment'],
      [form({ purpose: 'user_data', file: [new Blob(['x'], { type: 'text/html' }), 'a.html'] }), 400, 'file'],
    ];
    for (const [body, status, param] of cases) {
      const error = await errorOf(await send(body));
      expect([error.status, error.body.error.param]).toEqual([status, param]);
    }
    // Text is held in memory: its sum is capped, whatever the number of fields.
    const padded = form({ purpose: 'user_data', ...Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`pad${i}`, 'p'.repeat(600_000)])) });
    const tooMuchText = await errorOf(await send(padded));
    expect([tooMuchText.status, tooMuchText.body.error.code, tooMuchText.body.error.param]).toEqual([413, 'request_too_large', 'pad1']);
    // One field alone over the cap is as much a body over its limit.
    const oneLongField = await errorOf(await send(form({ purpose: 'user_data', note: 'n'.repeat(1024 * 1024 + 1) })));
    expect([oneLongField.status, oneLongField.body.error.code, oneLongField.body.error.param]).toEqual([413, 'request_too_large', 'note']);
    const json = await errorOf(await fetch(`${gw.baseURL}/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' }, body: '{}' }));
    expect([json.status, json.body.error.code]).toEqual([400, 'unsupported_content_type']);
  });

  it('runs an upload once per Idempotency-Key: the same file again is replayed, another is 409, a bad key 400', async () => {
    const upload = (bytes: string, key: string): Promise<Response> => {
      const form = new FormData();
      form.set('purpose', 'user_data');
      form.set('file', new Blob([bytes], { type: 'audio/wav' }), 'same.wav');
      return fetch(`${gw.baseURL}/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}`, 'idempotency-key': key }, body: form });
    };
    const first = await upload('RIFF-once', 'upload-1');
    expect(first.status).toBe(200);
    const created = (await first.json()) as { id: string };
    const before = storedBlobs().length;
    const again = await upload('RIFF-once', 'upload-1');
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
    expect(((await again.json()) as { id: string }).id).toBe(created.id);
    const other = await errorOf(await upload('RIFF-other', 'upload-1'));
    expect([other.status, other.body.error.code]).toEqual([409, 'idempotency_key_reused']);
    const bad = await errorOf(await upload('RIFF-once', 'a b'));
    expect([bad.status, bad.body.error.code]).toEqual([400, 'invalid_idempotency_key']);
    // A refusal before the upload ran (no purpose) is not recorded: the same form resent runs
    // again, and the key stays bound to it.
    const noPurpose = (): Promise<Response> => {
      const form = new FormData();
      form.set('file', new Blob(['RIFF-x'], { type: 'audio/wav' }), 'x.wav');
      return fetch(`${gw.baseURL}/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}`, 'idempotency-key': 'upload-2' }, body: form });
    };
    for (let i = 0; i < 2; i++) {
      const refused = await noPurpose();
      expect([refused.status, refused.headers.get('idempotent-replayed'), (await errorOf(refused)).body.error.param]).toEqual([400, null, 'purpose']);
    }
    expect((await errorOf(await upload('RIFF-x', 'upload-2'))).body.error.code).toBe('idempotency_key_reused');
    // The bytes of the resends are not kept.
    expect(storedBlobs().length).toBe(before);
  });

  it('answers a part without a field name with 400, not a fault of the gateway', async () => {
    for (const disposition of ['form-data', 'form-data; filename="a.bin"']) {
      const body = `--XX\r\nContent-Disposition: ${disposition}\r\n\r\nv\r\n--XX--\r\n`;
      const res = await fetch(`${gw.baseURL}/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'multipart/form-data; boundary=XX' }, body });
      const error = await errorOf(res);
      expect([error.status, error.body.error.code]).toEqual([400, 'bad_http_request']);
    }
  });

  it('refuses an unauthenticated upload before reading it', async () => {
    const error = await errorOf(await fetch(`${gw.baseURL}/files`, { method: 'POST', body: new FormData() }));
    expect([error.status, error.body.error.code]).toEqual([401, 'missing_api_key']);
  });

  it('answers 413 as soon as a streamed file crosses the limit, and keeps nothing of it', async () => {
    const before = storedBlobs().length;
    const result = await streamUpload(SMALL_LIMIT * 50, small);
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body).error).toMatchObject({ code: 'file_too_large', param: 'file' });
    // Answered right after the limit, not after the 400 MB the client meant to send.
    expect(result.writtenAtAnswer).toBeLessThan(SMALL_LIMIT * 4);
    await new Promise((r) => setTimeout(r, 100));
    expect(storedBlobs().length).toBe(before);
  }, 60_000);

  it('answers 413 at once when Content-Length already says the body is too large', async () => {
    // Only the headers and a few bytes are sent: the answer must not wait for the announced body.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${gw.baseURL}/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(LIMIT * 2) },
      }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      req.on('error', reject);
      req.write('--x\r\n');
    });
    expect(status).toBe(413);
  });

  it(`streams a ${BIG / 1024 / 1024} MB upload without growing memory`, async () => {
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const result = await streamUpload(BIG);
    clearInterval(sampler);
    expect(result.status).toBe(200);
    const file = JSON.parse(result.body) as { id: string; bytes: number };
    expect(file.bytes).toBe(BIG);
    const growthMb = (peak - before) / 1024 / 1024;
    console.log(`upload of ${BIG / 1024 / 1024} MB through HTTP: RSS ${Math.round(before / 1024 / 1024)} MB before, peak growth ${growthMb.toFixed(1)} MB`);
    expect(growthMb).toBeLessThan(64);
    await client.files.delete(file.id);
  }, 120_000);
});
