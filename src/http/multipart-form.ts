/**
 * Receives a multipart/form-data request: text fields are kept, each file part is streamed into
 * the blob store as it arrives (never held whole in memory) with the upload size limit enforced
 * while it streams, so that a file over the limit is refused the moment it crosses it, and
 * nothing of it is kept; likewise a body that stops arriving (`server.body_idle_timeout_ms`). The caller
 * must `discard()` the files it does not keep.
 */
import type { FastifyRequest } from 'fastify';
import type { Multipart } from '@fastify/multipart';
import { GatewayError } from '../errors/index.js';
import { BlobTooLargeError, type BlobInfo, type BlobStore } from '../storage/blobs/types.js';
import type { ContentTypeFilter } from '../uploads/content-types.js';
import { BodyIdleTimeout } from './body-idle-timeout.js';
import { lookup as lookupType } from 'mime-types';

export interface FormFile {
  readonly field: string;
  readonly filename: string;
  readonly contentType: string;
  readonly blob: BlobInfo;
}

export interface ReceivedForm {
  /** Every text field by name; `name[]` is stored under `name`, each value in order. */
  readonly fields: ReadonlyMap<string, readonly string[]>;
  readonly files: readonly FormFile[];
  /** Deletes the blobs of the files not kept. */
  discard(keep?: readonly FormFile[]): Promise<void>;
}

export interface FormLimits {
  readonly maxFileBytes: number;
  /** The fields that may carry a file; any other file part is refused. */
  readonly fileFields: readonly string[];
  readonly contentTypes: ContentTypeFilter;
  /** How long the body may send nothing before it is given up with 408 (`server.body_idle_timeout_ms`). */
  readonly idleTimeoutMs: number;
}

/** Room for the text fields and part headers besides the file, when judging Content-Length up front. */
const FORM_OVERHEAD_BYTES = 1024 * 1024;
const MAX_FIELD_BYTES = 1024 * 1024;
/**
 * The text fields together: they are held in memory, unlike files. The longest a route takes is a
 * prompt (a video's, 32,000 characters); without a cap on the sum, 64 fields of 1 MiB each made
 * one request hold 64 MiB, past `server.body_limit`, which a form's text does not go through.
 */
const MAX_TEXT_BYTES = 1024 * 1024;
const MAX_FIELDS = 64;

export function isMultipart(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data');
}

export async function receiveForm(request: FastifyRequest, blobs: BlobStore, limits: FormLimits): Promise<ReceivedForm> {
  if (!isMultipart(request)) {
    throw new GatewayError('unsupported_content_type', 'This endpoint takes its request as multipart/form-data.');
  }
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxFileBytes + FORM_OVERHEAD_BYTES) {
    throw tooLarge(limits.fileFields[0] ?? 'file', limits.maxFileBytes);
  }
  const fields = new Map<string, string[]>();
  const files: FormFile[] = [];
  let textBytes = 0;
  const discard = async (keep: readonly FormFile[] = []): Promise<void> => {
    for (const file of files) if (!keep.includes(file)) await blobs.delete(file.blob.id).catch(() => false);
  };
  const idle = new BodyIdleTimeout(request.raw, limits.idleTimeoutMs);
  try {
    const parts = request.parts({
      // One byte more than the limit, so that the blob store sees the limit crossed and refuses it.
      limits: { fileSize: limits.maxFileBytes + 1, files: limits.fileFields.length, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES, parts: MAX_FIELDS + limits.fileFields.length },
    });
    for await (const part of idle.iterate(parts)) {
      // busboy hands over a part whose Content-Disposition names no field with no fieldname at all.
      if (typeof part.fieldname !== 'string' || part.fieldname === '') {
        if (part.type === 'file') part.file.resume();
        throw new GatewayError('bad_http_request', 'A part of the multipart/form-data body has no field name (Content-Disposition: form-data; name="...").');
      }
      const name = part.fieldname.endsWith('[]') ? part.fieldname.slice(0, -2) : part.fieldname;
      if (part.type === 'field') {
        // One field over the cap is a body over its size limit as much as many fields together: 413 (spec 4).
        if (part.valueTruncated) throw new GatewayError('request_too_large', `The field ${name} is over ${MAX_FIELD_BYTES} bytes.`, { param: name });
        textBytes += Buffer.byteLength(String(part.value));
        if (textBytes > MAX_TEXT_BYTES) throw new GatewayError('request_too_large', `The form's text fields together are over ${MAX_TEXT_BYTES} bytes (files aside).`, { param: name });
        fields.set(name, [...(fields.get(name) ?? []), String(part.value)]);
        continue;
      }
      // One file a field: a second (the SDK sends an array as `name[]` parts) would silently replace the first.
      if (files.some((file) => file.field === name)) {
        part.file.resume();
        throw new GatewayError('invalid_parameter', `The field ${name} takes one file here.`, { param: name });
      }
      files.push(await storeFile(part, name, blobs, limits, idle));
    }
  } catch (err) {
    await discard();
    throw formError(err, limits);
  } finally {
    idle.stop();
  }
  return { fields, files, discard };
}

/**
 * A part's type as it is kept and checked. The official SDK (from a file stream or `toFile`
 * without a type) and `curl -F file=@clip.wav` send `application/octet-stream`, which says nothing:
 * then the file name's extension tells, as it does for the upstreams that read it.
 */
function partType(declared: string, filename: string | undefined): string {
  if (declared !== '' && declared.toLowerCase() !== 'application/octet-stream') return declared;
  return (filename !== undefined && filename !== '' && lookupType(filename)) || 'application/octet-stream';
}

const MAX_FILENAME_CHARS = 255;
const MAX_CONTENT_TYPE_CHARS = 127;
// eslint-disable-next-line no-control-regex -- control characters are what is looked for.
const CONTROL = /[\u0000-\u001f\u007f]/;

async function storeFile(part: Multipart & { type: 'file' }, name: string, blobs: BlobStore, limits: FormLimits, idle: BodyIdleTimeout): Promise<FormFile> {
  if (!limits.fileFields.includes(name)) {
    part.file.resume();
    throw new GatewayError('invalid_parameter', `The field ${name} cannot carry a file here${limits.fileFields.length > 0 ? `; files go in ${limits.fileFields.join(', ')}` : ''}.`, { param: name });
  }
  const contentType = partType(part.mimetype, part.filename);
  // What is kept of the part (its name and type) must fit the store's columns and hold no NUL,
  // which PostgreSQL refuses: said before any byte is stored, naming the field.
  const filename = part.filename || 'upload';
  if (filename.length > MAX_FILENAME_CHARS || CONTROL.test(filename)) {
    part.file.resume();
    throw new GatewayError('invalid_parameter', `The file name in ${name} must be at most ${MAX_FILENAME_CHARS} characters, without control characters.`, { param: name });
  }
  if (contentType.length > MAX_CONTENT_TYPE_CHARS || CONTROL.test(contentType)) {
    part.file.resume();
    throw new GatewayError('invalid_parameter', `The Content-Type of ${name} is not a media type (at most ${MAX_CONTENT_TYPE_CHARS} characters).`, { param: name });
  }
  if (!limits.contentTypes.allows(contentType)) {
    part.file.resume();
    throw new GatewayError('invalid_parameter', `Files of type ${contentType} are not accepted; accepted: ${limits.contentTypes.describe()}.`, { param: name });
  }
  // A body gone silent fails the put from its source: the store removes what it wrote.
  const uncut = idle.cuts(part.file);
  let blob: BlobInfo;
  try {
    blob = await blobs.put(part.file, { contentType, maxBytes: limits.maxFileBytes });
  } finally {
    uncut();
  }
  if (part.file.truncated) {
    await blobs.delete(blob.id);
    throw tooLarge(name, limits.maxFileBytes);
  }
  return { field: name, filename, contentType, blob };
}

function tooLarge(field: string, maxBytes: number): GatewayError {
  return new GatewayError('file_too_large', `The file in ${field} is over the upload limit of ${maxBytes} bytes.`, { param: field });
}

function formError(err: unknown, limits: FormLimits): unknown {
  if (err instanceof GatewayError) return err;
  const field = limits.fileFields[0] ?? 'file';
  if (err instanceof BlobTooLargeError) return tooLarge(field, limits.maxFileBytes);
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(field, limits.maxFileBytes);
  if (code === 'FST_FILES_LIMIT') return new GatewayError('invalid_parameter', `Send at most ${limits.fileFields.length} file(s) (${limits.fileFields.join(', ')}).`, { param: field });
  if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') return new GatewayError('invalid_parameter', `The form has more than ${MAX_FIELDS} fields.`, { param: null });
  if (err instanceof Error && /multipart|boundary|terminated early|unexpected end/i.test(err.message)) {
    return new GatewayError('bad_http_request', `The multipart/form-data body is malformed: ${err.message}.`);
  }
  return err;
}
