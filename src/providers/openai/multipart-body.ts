/**
 * A multipart/form-data request body produced as a stream: an uploaded file (up to hundreds of
 * megabytes of audio) flows from the blob store to the upstream without ever being held whole.
 * The encoding is the one the `openai` SDK and browsers use, so that every OpenAI-compatible
 * server parses it the way it parses theirs.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { GatewayError } from '../../errors/index.js';
import type { InputFile } from '../types.js';

export type FormPart = { readonly name: string; readonly value: string } | { readonly name: string; readonly file: InputFile };

export interface MultipartBody {
  /** `multipart/form-data; boundary=...` */
  readonly contentType: string;
  /**
   * The exact length, known up front from the files' sizes: sent as Content-Length, because some
   * servers and proxies in front of them refuse a chunked upload.
   */
  readonly contentLength: number;
  /** Read once; each call of multipartBody() opens the files anew (a failover sends them again). */
  readonly body: Readable;
}

const CRLF = Buffer.from('\r\n');

/** A Buffer of headers and text fields, or a file whose bytes are read when the body gets there. */
type Segment = Buffer | InputFile;

export function multipartBody(parts: readonly FormPart[], boundary = randomBoundary()): MultipartBody {
  const segments: Segment[] = [];
  let text: Buffer[] = [];
  let contentLength = 0;
  const addText = (bytes: Buffer): void => {
    text.push(bytes);
    contentLength += bytes.length;
  };
  for (const part of parts) {
    if ('file' in part) {
      addText(Buffer.from(`--${boundary}\r\n${disposition(part.name, part.file.filename)}\r\nContent-Type: ${headerSafe(part.file.contentType) || 'application/octet-stream'}\r\n\r\n`));
      // Adjacent text is joined into one write; a file ends the run.
      segments.push(Buffer.concat(text), part.file);
      text = [];
      contentLength += part.file.size;
      addText(CRLF);
    } else {
      addText(Buffer.from(`--${boundary}\r\n${disposition(part.name)}\r\n\r\n${part.value}\r\n`));
    }
  }
  addText(Buffer.from(`--${boundary}--\r\n`));
  segments.push(Buffer.concat(text));
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength,
    body: new MultipartStream(segments),
  };
}

/** The request headers for a form: the provider's, with the form's content headers. */
export function multipartHeaders(base: Record<string, string>, form: MultipartBody): Record<string, string> {
  return { ...base, 'content-type': form.contentType, 'content-length': String(form.contentLength) };
}

/** 128 random bits: the chance that file bytes contain the boundary is nil. */
function randomBoundary(): string {
  return `----TollgateFormBoundary${randomBytes(16).toString('hex')}`;
}

function disposition(name: string, filename?: string): string {
  const file = filename === undefined ? '' : `; filename="${escapeQuoted(filename)}"`;
  return `Content-Disposition: form-data; name="${escapeQuoted(name)}"${file}`;
}

/**
 * What the WHATWG form encoding (and the openai SDK) does to names and filenames: `"`, CR and LF
 * become %22, %0D and %0A, so a filename can neither end the quoted string nor start a header.
 * Backslash becomes %5C too (as the SDK does): some parsers read `\"` as an escaped quote.
 */
export function escapeQuoted(value: string): string {
  return value.replace(/["\\\r\n]/g, (character) => encodeURIComponent(character));
}

/** A content type is the caller's text: a line break in it would start a header of their making. */
function headerSafe(value: string): string {
  return value.replace(/[\r\n]/g, '').trim();
}

/**
 * The body as a Readable that holds the open file itself: destroying the body (the request
 * failed, the signal aborted) closes the file at once, even while a read from it is pending,
 * which an async generator cannot do (its return() waits for the pending read, forever if the
 * file is stuck). Flow control is the file stream's pause/resume.
 */
class MultipartStream extends Readable {
  private next = 0;
  /** The file whose bytes are being sent, and how many of them were sent. */
  private file: { readonly input: InputFile; readonly stream: FileStream; sent: number } | undefined;
  private opening = false;

  constructor(private readonly segments: readonly Segment[]) {
    super();
  }

  override _read(): void {
    if (this.file !== undefined) {
      this.file.stream.resume();
      return;
    }
    if (this.opening) return;
    const segment = this.segments[this.next++];
    if (segment === undefined) this.push(null);
    else if (Buffer.isBuffer(segment)) this.push(segment);
    else this.openFile(segment);
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    const file = this.file;
    this.file = undefined;
    file?.stream.destroy?.();
    callback(err);
  }

  private openFile(input: InputFile): void {
    this.opening = true;
    input.open().then(
      (opened) => {
        this.opening = false;
        const stream = opened as FileStream;
        if (this.destroyed) {
          stream.destroy?.();
          return;
        }
        this.attach(input, stream);
      },
      (err: unknown) => {
        this.opening = false;
        this.destroy(unreadable(input, err));
      },
    );
  }

  /**
   * The file's bytes, checked against its declared size: the Content-Length was computed from it,
   * and a short or long file would otherwise reach the upstream as a cut or corrupt upload.
   */
  private attach(input: InputFile, stream: FileStream): void {
    const file = { input, stream, sent: 0 };
    this.file = file;
    stream.on('data', (chunk: Buffer | string) => {
      if (this.file !== file) return;
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      file.sent += bytes.length;
      if (file.sent > input.size) this.destroy(sizeMismatch(input, `more than ${input.size}`));
      else if (!this.push(bytes)) stream.pause();
    });
    stream.once('end', () => {
      if (this.file !== file) return;
      this.file = undefined;
      if (file.sent !== input.size) this.destroy(sizeMismatch(input, String(file.sent)));
      else this._read();
    });
    stream.once('error', (err: unknown) => {
      if (this.file === file) this.destroy(unreadable(input, err));
    });
    // Destroyed by someone else before its end: the upload cannot be completed.
    stream.once('close', () => {
      if (this.file === file) this.destroy(unreadable(input, new Error('The file stream closed before its end.')));
    });
  }
}

type FileStream = NodeJS.ReadableStream & { destroy?: () => void };

function unreadable(file: InputFile, cause: unknown): GatewayError {
  return new GatewayError('internal_error', `The uploaded file "${file.filename}" could not be read.`, { cause });
}

function sizeMismatch(file: InputFile, actual: string): GatewayError {
  return new GatewayError('internal_error', `The uploaded file "${file.filename}" holds ${actual} bytes, not the ${file.size} recorded.`);
}
