/**
 * Uploads, over OpenAI's Files API shape: POST /v1/files (multipart `file` and `purpose`, streamed
 * to the blob store with the upload limit enforced as it arrives), GET /v1/files (a cursor page),
 * GET /v1/files/{file_id}, GET /v1/files/{file_id}/content (with Range), DELETE /v1/files/{file_id}.
 * A file of another account is 404, like one that does not exist.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../auth/principal.js';
import { GatewayError } from '../../errors/index.js';
import type { Files } from '../../uploads/files.js';
import type { ContentTypeFilter } from '../../uploads/content-types.js';
import type { FileRecord } from '../../storage/types.js';
import type { BlobRange } from '../../storage/blobs/types.js';
import type { AccessLog } from '../access-log.js';
import { receiveForm, type FormFile } from '../multipart-form.js';
import { formBodies } from '../form-body.js';
import { REPLAYED, runIdempotent, type IdempotencyGuardDeps } from '../idempotency-guard.js';
import { sendContent } from '../send-content.js';
import { listBody, listPageOf } from '../list-query.js';
import type { LimitHeadersHook } from '../tier-limit-headers.js';
import type { InFlightWork } from '../in-flight-work.js';
import type { Admission } from '../../limits/types.js';

interface FileParams {
  file_id: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const PURPOSE = /^[a-z][a-z0-9_-]{0,63}$/;
/** OpenAI's files list serves pages of up to 10,000, and scripts ask for that many. */
const FILES_MAX_LIMIT = 10_000;

export function fileRoutes(
  app: FastifyInstance,
  files: Files,
  contentTypes: ContentTypeFilter,
  accessLog: AccessLog,
  idempotency: IdempotencyGuardDeps,
  limitHeaders: LimitHeadersHook,
  work: InFlightWork,
  admitUpload: (request: FastifyRequest) => Admission | Promise<Admission>,
): void {
  const options = { config: { endpoint: 'files' }, preHandler: limitHeaders };

  app.post('/files', { config: options.config }, async (request, reply) => {
    // Counted before a byte of the file is read: a refused upload (429) is not received at all.
    const admission = await admitUpload(request);
    reply.headers(admission.headers);
    // Counted as running work: a drain that cuts the upload's connection waits for the handler to
    // discard what it stored before the stores close.
    work.begin();
    try {
      return await upload(request, reply);
    } finally {
      work.end();
      admission.settle({ tokens: 0, failed: false });
    }
  });

  async function upload(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const form = await receiveForm(request, files.blobs, { maxFileBytes: files.settings.maxBytes, fileFields: ['file'], contentTypes, idleTimeoutMs: files.settings.idleTimeoutMs });
    let kept: FormFile | undefined;
    try {
      // The same file resent under its key matches by its digest, not by the blob it landed in.
      const answer = await runIdempotent(request, reply, idempotency, formBodies(form).fingerprint, async () => {
        const file = form.files[0];
        if (file === undefined) throw new GatewayError('missing_required_parameter', 'Send the file to upload in the multipart field "file".', { param: 'file' });
        const purpose = form.fields.get('purpose')?.[0];
        if (purpose === undefined) throw new GatewayError('missing_required_parameter', 'Say what the file is for in the field "purpose" (e.g. "user_data").', { param: 'purpose' });
        if (!PURPOSE.test(purpose)) throw new GatewayError('invalid_parameter', 'purpose must be a lower-case word such as "user_data" or "vision".', { param: 'purpose' });
        const lifetimeMs = lifetimeOf(form.fields);
        const record = await files.save({ accountId: accountOf(request), filename: file.filename, purpose, blob: file.blob, ...(lifetimeMs === undefined ? {} : { lifetimeMs }) });
        kept = file;
        return { status: 200, body: JSON.stringify(fileView(record)) };
      });
      if (answer === REPLAYED) {
        accessLog(reply, reply.statusCode);
        return reply;
      }
      return send(request, reply, answer.status, answer.body);
    } finally {
      await form.discard(kept === undefined ? [] : [kept]);
    }
  }

  app.get('/files', options, async (request, reply) => {
    const page = listPageOf(request.query, FILES_MAX_LIMIT);
    const purpose = (request.query as Record<string, unknown> | undefined)?.purpose;
    if (purpose !== undefined && (typeof purpose !== 'string' || !PURPOSE.test(purpose))) {
      throw new GatewayError('invalid_parameter', 'purpose must be one lower-case word such as "user_data" or "batch".', { param: 'purpose' });
    }
    const items = await files.list(accountOf(request), { ...page, limit: page.limit + 1 }, purpose);
    reply.header('x-request-id', request.id).header('content-type', JSON_TYPE).send(listBody(items.map(fileView), page.limit));
    accessLog(reply, 200);
    return reply;
  });

  app.get<{ Params: FileParams }>('/files/:file_id', options, async (request, reply) => {
    return send(request, reply, 200, fileView(await files.find(accountOf(request), request.params.file_id)));
  });

  app.delete<{ Params: FileParams }>('/files/:file_id', options, async (request, reply) => {
    const file = await files.delete(accountOf(request), request.params.file_id);
    return send(request, reply, 200, { id: file.id, object: 'file', deleted: true });
  });

  app.get<{ Params: FileParams }>('/files/:file_id/content', options, async (request, reply) => {
    const file = await files.find(accountOf(request), request.params.file_id);
    const content = { bytes: file.bytes, contentType: file.contentType, what: 'file', open: (range?: BlobRange) => files.content(file, range) };
    accessLog(reply, await sendContent(request, reply, content, 'private, no-cache'));
    return reply;
  });

  function send(request: FastifyRequest, reply: FastifyReply, status: number, body: unknown): FastifyReply {
    reply.code(status).header('x-request-id', request.id).header('content-type', JSON_TYPE).send(typeof body === 'string' ? body : JSON.stringify(body));
    accessLog(reply, status);
    return reply;
  }
}

/** The fields OpenAI's files upload takes; another is refused rather than ignored. */
const FIELDS = new Set(['purpose', 'expires_after[anchor]', 'expires_after[seconds]']);
/** OpenAI's bounds for `expires_after[seconds]`: an hour to 30 days. */
const MIN_LIFETIME_S = 3_600;
const MAX_LIFETIME_S = 2_592_000;

/** The lifetime `expires_after` asks for, in milliseconds, or undefined when it is not sent. */
function lifetimeOf(fields: ReadonlyMap<string, readonly string[]>): number | undefined {
  for (const name of fields.keys()) {
    if (!FIELDS.has(name)) throw new GatewayError('invalid_parameter', `Unknown field ${name.slice(0, 64)}; a file upload takes file, purpose and expires_after.`, { param: name.slice(0, 64) });
  }
  const anchor = fields.get('expires_after[anchor]')?.[0];
  const seconds = fields.get('expires_after[seconds]')?.[0];
  if (anchor === undefined && seconds === undefined) return undefined;
  if (anchor !== 'created_at') throw new GatewayError('invalid_parameter', 'expires_after[anchor] must be "created_at".', { param: 'expires_after[anchor]' });
  const value = seconds === undefined ? NaN : Number(seconds);
  if (!/^\d+$/.test(seconds ?? '') || value < MIN_LIFETIME_S || value > MAX_LIFETIME_S) {
    throw new GatewayError('invalid_parameter', `expires_after[seconds] must be an integer from ${MIN_LIFETIME_S} to ${MAX_LIFETIME_S}.`, { param: 'expires_after[seconds]' });
  }
  return value * 1000;
}

function accountOf(request: FastifyRequest): string {
  return (request.principal as Principal).account.id;
}

export function fileView(file: FileRecord): Record<string, unknown> & { id: string } {
  return {
    id: file.id,
    object: 'file',
    bytes: file.bytes,
    created_at: Math.floor(file.createdAt / 1000),
    expires_at: Math.floor(file.expiresAt / 1000),
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed',
    status_details: null,
  };
}
