/**
 * Reading a multipart/form-data upload in the fake servers the way a real server does: streamed,
 * so a 20 MB file costs no memory, with each file reduced to what tests check (its size, a hash
 * of its bytes, its first bytes). busboy, the parser behind @fastify/multipart, is a different
 * implementation from the gateway's encoder, so a test that passes here is not self-confirming.
 */
import { Busboy } from '@fastify/busboy';
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

export interface FakeFormFile {
  /** The part's name (`file`, `input_reference`). */
  readonly field: string;
  readonly filename: string;
  readonly contentType: string;
  readonly size: number;
  /** Hex SHA-256 of the bytes received. */
  readonly sha256: string;
  /** Up to the first 64 bytes. */
  readonly head: Buffer;
}

export interface FakeForm {
  readonly kind: 'multipart';
  /** Text fields in arrival order; a repeated name (`timestamp_granularities[]`) once per value. */
  readonly fields: ReadonlyArray<readonly [string, string]>;
  readonly files: readonly FakeFormFile[];
}

const HEAD_BYTES = 64;

export function isMultipart(headers: IncomingHttpHeaders): boolean {
  return (headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data');
}

export function isFakeForm(value: unknown): value is FakeForm {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'multipart';
}

/** The last value of a text field, as a server keeping one value per name sees it. */
export function formField(form: FakeForm, name: string): string | undefined {
  let value: string | undefined;
  for (const [key, text] of form.fields) if (key === name) value = text;
  return value;
}

export function formValues(form: FakeForm, name: string): string[] {
  return form.fields.filter(([key]) => key === name).map(([, text]) => text);
}

export function formFile(form: FakeForm, field: string): FakeFormFile | undefined {
  return form.files.find((file) => file.field === field);
}

/** Resolves once the whole body has been read; rejects when it is not valid multipart. */
export function readMultipartForm(req: IncomingMessage): Promise<FakeForm> {
  return new Promise((resolve, reject) => {
    const fields: Array<readonly [string, string]> = [];
    const files: FakeFormFile[] = [];
    const pending: Array<Promise<void>> = [];
    let parser;
    try {
      parser = new Busboy({ headers: req.headers as IncomingHttpHeaders & { 'content-type': string }, limits: { fieldSize: 10 * 1024 * 1024 } });
    } catch (err) {
      req.resume();
      reject(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    parser.on('field', (name, value) => fields.push([name, value]));
    parser.on('file', (field, stream, filename, _encoding, contentType) => {
      pending.push(
        new Promise((done, fail) => {
          const hash = createHash('sha256');
          const head: Buffer[] = [];
          let size = 0;
          stream.on('data', (chunk: Buffer) => {
            if (size < HEAD_BYTES) head.push(chunk.subarray(0, HEAD_BYTES - size));
            size += chunk.length;
            hash.update(chunk);
          });
          stream.on('error', fail);
          stream.on('end', () => {
            files.push({ field, filename, contentType, size, sha256: hash.digest('hex'), head: Buffer.concat(head) });
            done();
          });
        }),
      );
    });
    parser.on('error', (err: unknown) => {
      req.resume();
      reject(err instanceof Error ? err : new Error(String(err)));
    });
    parser.on('finish', () => {
      Promise.all(pending).then(() => resolve({ kind: 'multipart', fields, files }), reject);
    });
    req.pipe(parser);
  });
}
