/**
 * A received multipart form as the request body an operation validates: text fields as strings
 * (a field sent several times, or as `name[]`, as a list), each file as a FormPart pointing at its
 * blob. The Idempotency-Key fingerprint uses the same body with each file's SHA-256 in place of
 * its blob, so that resending the same file matches.
 */
import type { FormPart } from '../core/operations/form-input.js';
import type { ReceivedForm } from './multipart-form.js';

export function formBodies(form: ReceivedForm): { body: Record<string, unknown>; fingerprint: Record<string, unknown> } {
  const body: Record<string, unknown> = {};
  for (const [name, values] of form.fields) body[name] = values.length === 1 ? values[0] : [...values];
  const fingerprint: Record<string, unknown> = { ...body };
  for (const file of form.files) {
    const part: FormPart = { filename: file.filename, content_type: file.contentType, bytes: file.blob.size, sha256: file.blob.sha256, blob_id: file.blob.id };
    body[file.field] = part;
    const { blob_id: _blob, ...identity } = part;
    fingerprint[file.field] = identity;
  }
  return { body, fingerprint };
}
