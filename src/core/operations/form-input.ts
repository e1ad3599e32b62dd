/**
 * Files as inputs of a request: a multipart part the HTTP layer already streamed into the blob
 * store (described in the body as a FormPart), or an earlier upload named by id (`file_id`).
 * Either way the adapter gets an InputFile it can read, again on a failover.
 */
import { GatewayError } from '../../errors/index.js';
import type { Principal } from '../../auth/principal.js';
import type { Files } from '../../uploads/files.js';
import type { InputFile } from '../../providers/types.js';

/**
 * Marks the parts the HTTP layer made. A JSON body can take any shape, so without the mark a caller
 * could write a part naming a blob of another account's upload and have it read as its own input;
 * no JSON text can produce a symbol-keyed property.
 */
const RECEIVED = Symbol('received form part');

/** How the HTTP layer puts a received file part in the request body it hands to an operation. */
export interface FormPart {
  readonly filename: string;
  readonly content_type: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly blob_id: string;
  readonly [RECEIVED]: true;
}

/** A file part the HTTP layer received and streamed into the blob store itself. */
export function receivedPart(part: Omit<FormPart, typeof RECEIVED>): FormPart {
  return { ...part, [RECEIVED]: true };
}

export function isFormPart(value: unknown): value is FormPart {
  return typeof value === 'object' && value !== null && (value as Partial<FormPart>)[RECEIVED] === true;
}

/**
 * The file in `field` (a part), or the upload whose id is in `idField`; undefined when neither was
 * sent. Sending both is refused: which one was meant is not ours to guess.
 */
export async function inputFileOf(body: Record<string, unknown>, field: string, idField: string, files: Files, principal: Principal): Promise<InputFile | undefined> {
  const part = body[field];
  const id = body[idField];
  if (part !== undefined && id !== undefined) throw new GatewayError('invalid_parameter', `Send ${field} or ${idField}, not both.`, { param: idField });
  if (part !== undefined) {
    if (!isFormPart(part)) throw new GatewayError('invalid_parameter', `${field} must be a file sent as multipart/form-data.`, { param: field });
    return files.inputFile(part.blob_id, part.filename, part.content_type, part.bytes);
  }
  if (id === undefined) return undefined;
  if (typeof id !== 'string') throw new GatewayError('invalid_parameter', `${idField} must be the id of an uploaded file (file-…).`, { param: idField });
  const file = await files.find(principal.account.id, id, idField);
  return files.inputFile(file.blobId, file.filename, file.contentType, file.bytes);
}

/** A form field as a number (form fields are text; JSON bodies may already have numbers). */
export function numberField(body: Record<string, unknown>, name: string): number | undefined {
  const value = body[name];
  if (value === undefined || typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  throw new GatewayError('invalid_parameter', `${name} must be a number, got ${JSON.stringify(value)?.slice(0, 60) ?? 'nothing'}.`, { param: name });
}
