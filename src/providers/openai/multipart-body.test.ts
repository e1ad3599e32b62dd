import { Busboy } from '@fastify/busboy';
import { PassThrough, type Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { bytesFile, generatedFile } from '../../../test/fakes/input-files.js';
import { GatewayError } from '../../errors/index.js';
import type { InputFile } from '../types.js';
import { escapeQuoted, multipartBody, multipartHeaders } from './multipart-body.js';

const BOUNDARY = 'test-boundary-0123';

async function drain(body: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of body) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a GatewayError, got success');
}

interface Parsed {
  fields: Array<[string, string]>;
  files: Array<{ field: string; filename: string; contentType: string; bytes: Buffer }>;
}

/** Parses a body with busboy, the parser behind @fastify/multipart: an independent reading. */
function parse(contentType: string, body: Buffer): Promise<Parsed> {
  return new Promise((resolve, reject) => {
    const parsed: Parsed = { fields: [], files: [] };
    const parser = new Busboy({ headers: { 'content-type': contentType } });
    parser.on('field', (name, value) => parsed.fields.push([name, value]));
    parser.on('file', (field, stream, filename, _encoding, type) => {
      const parts: Buffer[] = [];
      stream.on('data', (part: Buffer) => parts.push(part));
      stream.on('end', () => parsed.files.push({ field, filename, contentType: type, bytes: Buffer.concat(parts) }));
    });
    parser.on('error', reject);
    parser.on('finish', () => resolve(parsed));
    const input = new PassThrough();
    input.pipe(parser);
    input.end(body);
  });
}

describe('multipartBody', () => {
  it('encodes fields and a file byte for byte as the openai SDK does, with an exact Content-Length', async () => {
    const form = multipartBody(
      [
        { name: 'model', value: 'whisper-1' },
        { name: 'file', file: bytesFile(Buffer.from('RIFFdata'), 'hello.wav', 'audio/wav') },
      ],
      BOUNDARY,
    );
    const body = await drain(form.body);
    expect(form.contentType).toBe(`multipart/form-data; boundary=${BOUNDARY}`);
    expect(body.toString('latin1')).toBe(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n` +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="hello.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFFdata\r\n` +
        `--${BOUNDARY}--\r\n`,
    );
    expect(form.contentLength).toBe(body.length);
    expect(multipartHeaders({ authorization: 'Bearer k', 'content-type': 'application/json' }, form)).toEqual({
      authorization: 'Bearer k',
      'content-type': form.contentType,
      'content-length': String(body.length),
    });
  });

  it('reads back through busboy: repeated fields, UTF-8 text, several files, binary bytes', async () => {
    const binary = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7) & 0xff));
    const form = multipartBody([
      { name: 'prompt', value: 'Un chat qui danse — 猫が踊る\r\nsecond line' },
      { name: 'timestamp_granularities[]', value: 'word' },
      { name: 'timestamp_granularities[]', value: 'segment' },
      { name: 'first', file: bytesFile(binary, 'données.bin', 'application/octet-stream') },
      { name: 'second', file: bytesFile(Buffer.from(`--${'x'.repeat(10)}\r\n`), 'b.txt', 'text/plain') },
    ]);
    const body = await drain(form.body);
    expect(form.contentLength).toBe(body.length);
    const parsed = await parse(form.contentType, body);
    expect(parsed.fields).toEqual([
      ['prompt', 'Un chat qui danse — 猫が踊る\r\nsecond line'],
      ['timestamp_granularities[]', 'word'],
      ['timestamp_granularities[]', 'segment'],
    ]);
    expect(parsed.files.map((f) => [f.field, f.filename, f.contentType])).toEqual([
      ['first', 'données.bin', 'application/octet-stream'],
      ['second', 'b.txt', 'text/plain'],
    ]);
    expect(parsed.files[0]!.bytes.equals(binary)).toBe(true);
    expect(parsed.files[1]!.bytes.toString()).toBe(`--${'x'.repeat(10)}\r\n`);
  });

  it('escapes quotes, backslashes and line breaks in names and filenames, and line breaks in content types', async () => {
    expect(escapeQuoted('a"b\\c\r\nd')).toBe('a%22b%5Cc%0D%0Ad');
    const form = multipartBody(
      [
        { name: 'we"ird\nname', value: 'v' },
        { name: 'file', file: bytesFile(Buffer.from('x'), 'evil".wav\r\nX-Filename: 1', 'audio/wav\r\nX-Injected: 1') },
      ],
      BOUNDARY,
    );
    const text = (await drain(form.body)).toString('latin1');
    expect(text).toContain('Content-Disposition: form-data; name="we%22ird%0Aname"\r\n');
    expect(text).toContain('name="file"; filename="evil%22.wav%0D%0AX-Filename: 1"\r\nContent-Type: audio/wavX-Injected: 1\r\n\r\nx\r\n');
    expect(text).not.toContain('\r\nX-Injected');
    expect(text).not.toContain('\r\nX-Filename');
    const parsed = await parse(form.contentType, Buffer.from(text, 'latin1'));
    expect(parsed.fields).toEqual([['we%22ird%0Aname', 'v']]);
    expect(parsed.files[0]?.filename).toBe('evil%22.wav%0D%0AX-Filename: 1');
  });

  it('uses a fresh random boundary for every body', () => {
    const a = multipartBody([{ name: 'a', value: '1' }]).contentType;
    const b = multipartBody([{ name: 'a', value: '1' }]).contentType;
    expect(a).toMatch(/^multipart\/form-data; boundary=-{4}TollgateFormBoundary[0-9a-f]{32}$/);
    expect(a).not.toBe(b);
  });

  it('streams a 20 MB file: it is read as the body is consumed, never ahead of it', async () => {
    const size = 20 * 1024 * 1024;
    const file = generatedFile(size);
    const form = multipartBody([{ name: 'model', value: 'whisper-1' }, { name: 'file', file }]);
    expect(file.produced).toBe(0);
    const iterator = form.body[Symbol.asyncIterator]();
    let consumed = 0;
    for (let i = 0; i < 4; i++) consumed += ((await iterator.next()).value as Buffer).length;
    // Only stream read-ahead separates what was produced from what was consumed.
    expect(file.produced).toBeLessThan(consumed + 1024 * 1024);
    let next = await iterator.next();
    while (next.done !== true) {
      consumed += (next.value as Buffer).length;
      next = await iterator.next();
    }
    expect(consumed).toBe(form.contentLength);
    expect(file.produced).toBe(size);
  });

  it('closes the file when the body is abandoned mid-way', async () => {
    const file = generatedFile(10 * 1024 * 1024);
    const form = multipartBody([{ name: 'file', file }]);
    const iterator = form.body[Symbol.asyncIterator]();
    await iterator.next();
    await iterator.next();
    form.body.destroy();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(file.streams).toHaveLength(1);
    expect(file.streams[0]!.destroyed).toBe(true);
    expect(file.produced).toBeLessThan(2 * 1024 * 1024);
  });

  it('opens the file anew for every body built, as a failover needs', async () => {
    const file = bytesFile(Buffer.from('abc'));
    const first = await drain(multipartBody([{ name: 'file', file }], BOUNDARY).body);
    const second = await drain(multipartBody([{ name: 'file', file }], BOUNDARY).body);
    expect(second.equals(first)).toBe(true);
    expect(file.streams).toHaveLength(2);
  });

  for (const [what, actual, declared] of [
    ['shorter', 10, 20],
    ['longer', 200_000, 100_000],
  ] as const) {
    it(`fails with internal_error when the file is ${what} than its recorded size`, async () => {
      const form = multipartBody([{ name: 'file', file: generatedFile(actual, 'f.wav', 'audio/wav', undefined, declared) }]);
      const error = await failure(drain(form.body));
      expect(error.code).toBe('internal_error');
      expect(error.message).toContain(`not the ${declared} recorded`);
    });
  }

  it('fails with internal_error when the file cannot be opened', async () => {
    const missing: InputFile = { filename: 'gone.wav', contentType: 'audio/wav', size: 3, open: () => Promise.reject(new Error('ENOENT: blob missing')) };
    const error = await failure(drain(multipartBody([{ name: 'file', file: missing }]).body));
    expect(error.code).toBe('internal_error');
    expect(error.message).toContain('"gone.wav" could not be read');
  });
});
