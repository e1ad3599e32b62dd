/**
 * GET /v1/assets/{asset_id} (the record) and GET /v1/assets/{asset_id}/content (the bytes, with
 * single-range requests: 206 and Content-Range, 416 past the end). An asset of another account is
 * 404, like one that does not exist.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../../auth/principal.js';
import type { Assets } from '../../assets/assets.js';
import type { AssetRecord } from '../../storage/types.js';
import type { AccessLog } from '../access-log.js';
import { sendContent } from '../send-content.js';
import type { BlobRange } from '../../storage/blobs/types.js';
import { assetUrlFor } from '../public-url.js';
import type { LimitHeadersHook } from '../tier-limit-headers.js';

interface AssetParams {
  asset_id: string;
}

export function assetRoutes(app: FastifyInstance, assets: Assets, accessLog: AccessLog, publicUrl: string | undefined, limitHeaders: LimitHeadersHook): void {
  const options = { config: { endpoint: 'assets' }, preHandler: limitHeaders };

  app.get<{ Params: AssetParams }>('/assets/:asset_id', options, async (request, reply) => {
    const asset = await assets.find(accountOf(request), request.params.asset_id);
    reply.header('x-request-id', request.id).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(view(asset, assetUrlFor(request, publicUrl))));
    accessLog(reply, 200);
    return reply;
  });

  app.get<{ Params: AssetParams }>('/assets/:asset_id/content', options, async (request, reply) => {
    const asset = await assets.find(accountOf(request), request.params.asset_id);
    const content = { bytes: asset.bytes, contentType: asset.contentType, what: 'asset', open: (range?: BlobRange) => assets.content(asset, range) };
    accessLog(reply, await sendContent(request, reply, content, 'private, max-age=86400, immutable'));
    return reply;
  });
}

function accountOf(request: FastifyRequest): string {
  return (request.principal as Principal).account.id;
}

function view(asset: AssetRecord, url: (id: string) => string): Record<string, unknown> {
  return { id: asset.id, object: 'asset', content_type: asset.contentType, bytes: asset.bytes, created_at: Math.floor(asset.createdAt / 1000), url: url(asset.id) };
}
