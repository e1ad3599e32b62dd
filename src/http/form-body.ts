/**
 * A received multipart form as the request body an operation validates: text fields as strings
 * (a field sent several times, or as `name[]`, as a list), each file as a FormPart pointing at its
 * blob. The Idempotency-Key fingerprint uses the same body with each file's SHA-256 in place of
 * its blob, so that resending the same file matches.
 */
import { receivedPart } from '../core/operations/form-input.js';
import type { ReceivedForm } from './multipart-form.js';

export function formBodies(form: ReceivedForm): { body: Record<string, unknown>; fingerprint: Record<string, unknown> } {
  const body: Record<string, unknown> = {};
  for (const [name, values] of form.fields) body[name] = values.length === 1 ? values[0] : [...values];
  const fingerprint: Record<string, unknown> = { ...body };
  for (const file of form.files) {
    const identity = { filename: file.filename, content_type: file.contentType, bytes: file.blob.size, sha256: file.blob.sha256 };
    body[file.field] = receivedPart({ ...identity, blob_id: file.blob.id });
    fingerprint[file.field] = identity;
  }
  return { body, fingerprint };
}
