/**
 * Video jobs besides their creation (POST /v1/videos goes through the unary pipeline): GET
 * /v1/videos (a cursor page), GET /v1/videos/{video_id}, GET /v1/videos/{video_id}/content (the
 * MP4, with Range), POST /v1/videos/{video_id}/cancel (Tollgate's; 409 once finished) and DELETE
 * /v1/videos/{video_id} (409 while in flight). A job of another account is 404.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../auth/principal.js';
import { GatewayError } from '../../errors/index.js';
import type { Assets } from '../../assets/assets.js';
import type { VideoJobs } from '../../videos/video-jobs.js';
import { videoView } from '../../videos/video-view.js';
import type { VideoJobRecord } from '../../storage/types.js';
import type { BlobRange } from '../../storage/blobs/types.js';
import { videoInFlight } from '../../protocol/videos.js';
import type { AccessLog } from '../access-log.js';
import { REPLAYED, runIdempotent, type IdempotencyGuardDeps } from '../idempotency-guard.js';
import { sendContent } from '../send-content.js';
import { listBody, listPageOf } from '../list-query.js';
import type { LimitHeadersHook } from '../tier-limit-headers.js';

interface VideoParams {
  video_id: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export function videoRoutes(
  app: FastifyInstance,
  jobs: VideoJobs,
  assets: Assets,
  assetRetentionMs: number,
  accessLog: AccessLog,
  idempotency: IdempotencyGuardDeps,
  limitHeaders: LimitHeadersHook,
): void {
  const options = { config: { endpoint: 'videos' }, preHandler: limitHeaders };
  const view = (job: VideoJobRecord) => videoView(job, job.completedAt === null || job.assetId === null ? null : job.completedAt + assetRetentionMs);

  app.get('/videos', options, async (request, reply) => {
    const page = listPageOf(request.query);
    const items = await jobs.list(accountOf(request), { ...page, limit: page.limit + 1 });
    return send(request, reply, 200, listBody(items.map(view), page.limit));
  });

  app.get<{ Params: VideoParams }>('/videos/:video_id', options, async (request, reply) => {
    return send(request, reply, 200, JSON.stringify(view(await jobs.find(accountOf(request), request.params.video_id))));
  });

  app.get<{ Params: VideoParams; Querystring: { variant?: string } }>('/videos/:video_id/content', options, async (request, reply) => {
    const variant = request.query.variant;
    if (variant !== undefined && variant !== 'video') {
      throw new GatewayError('invalid_parameter', `variant "${String(variant).slice(0, 40)}" is not available; Tollgate keeps the video itself (variant "video").`, { param: 'variant' });
    }
    const job = await jobs.find(accountOf(request), request.params.video_id);
    if (videoInFlight(job.status)) {
      throw new GatewayError('video_job_in_progress', `The video job ${job.id} is still ${job.status} (${job.progress}%); its content is ready once it is completed.`, {
        param: 'video_id',
        retryAfterSeconds: 5,
      });
    }
    if (job.assetId === null) throw new GatewayError('video_not_found', `The video job ${job.id} ended ${job.status} and has no video.`, { param: 'video_id' });
    const asset = await assets.find(job.accountId, job.assetId).catch(() => {
      throw new GatewayError('video_not_found', `The video of job ${job.id} is no longer kept.`, { param: 'video_id' });
    });
    const content = { bytes: asset.bytes, contentType: asset.contentType, what: 'video', open: (range?: BlobRange) => assets.content(asset, range) };
    accessLog(reply, await sendContent(request, reply, content, 'private, max-age=86400, immutable'));
    return reply;
  });

  app.post<{ Params: VideoParams }>('/videos/:video_id/cancel', { ...options, config: { ...options.config, takesNoBody: true } }, async (request, reply) => {
    // The method and path are the whole request: a resend under the key gets the first answer back.
    const answer = await runIdempotent(request, reply, idempotency, null, async () => {
      return { status: 200, body: JSON.stringify(view(await jobs.cancel(accountOf(request), request.params.video_id))) };
    });
    if (answer === REPLAYED) {
      accessLog(reply, reply.statusCode);
      return reply;
    }
    return send(request, reply, answer.status, answer.body);
  });

  app.delete<{ Params: VideoParams }>('/videos/:video_id', options, async (request, reply) => {
    const job = await jobs.find(accountOf(request), request.params.video_id);
    await jobs.delete(job.accountId, job.id);
    return send(request, reply, 200, JSON.stringify({ id: job.id, object: 'video.deleted', deleted: true }));
  });

  function send(request: FastifyRequest, reply: FastifyReply, status: number, body: string): FastifyReply {
    reply.code(status).header('x-request-id', request.id).header('content-type', JSON_TYPE).send(body);
    accessLog(reply, status);
    return reply;
  }
}

function accountOf(request: FastifyRequest): string {
  return (request.principal as Principal).account.id;
}
