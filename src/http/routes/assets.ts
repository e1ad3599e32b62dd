/**
 * GET /v1/assets/{asset_id} (the record) and GET /v1/assets/{asset_id}/content (the bytes, with
 * single-range requests: 206 and Content-Range, 416 past the end). An asset of another account is
 * 404, like one that does not exist.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../../auth/principal.js';
import type { Assets } from '../../assets/assets.js';
import { GatewayError } from '../../errors/index.js';
import type { AssetRecord } from '../../storage/types.js';
import type { AccessLog } from '../access-log.js';
import { parseRange } from '../range-header.js';
import { assetUrlFor } from '../public-url.js';

interface AssetParams {
  asset_id: string;
}

export function assetRoutes(app: FastifyInstance, assets: Assets, accessLog: AccessLog, publicUrl: string | undefined): void {
  const config = { endpoint: 'assets' };

  app.get<{ Params: AssetParams }>('/assets/:asset_id', { config }, async (request, reply) => {
    const asset = await assets.find(accountOf(request), request.params.asset_id);
    reply.header('x-request-id', request.id).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(view(asset, assetUrlFor(request, publicUrl))));
    accessLog(reply, 200);
    return reply;
  });

  app.get<{ Params: AssetParams }>('/assets/:asset_id/content', { config }, async (request, reply) => {
    const asset = await assets.find(accountOf(request), request.params.asset_id);
    const header = request.headers.range;
    const range = parseRange(Array.isArray(header) ? undefined : header, asset.bytes);
    if (range === 'unsatisfiable') {
      throw new GatewayError('range_not_satisfiable', `The Range "${String(header).slice(0, 100)}" starts past the end of the asset (${asset.bytes} bytes).`, {
        param: 'Range',
        headers: { 'content-range': `bytes */${asset.bytes}` },
      });
    }
    const content = await assets.content(asset, range ?? undefined);
    reply
      .header('x-request-id', request.id)
      .header('content-type', asset.contentType)
      .header('accept-ranges', 'bytes')
      .header('cache-control', 'private, max-age=86400, immutable');
    if (range === null) reply.header('content-length', String(asset.bytes));
    else reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${asset.bytes}`).header('content-length', String(range.end - range.start + 1));
    accessLog(reply, range === null ? 200 : 206);
    return reply.send(content);
  });
}

function accountOf(request: FastifyRequest): string {
  return (request.principal as Principal).account.id;
}

function view(asset: AssetRecord, url: (id: string) => string): Record<string, unknown> {
  return { id: asset.id, object: 'asset', content_type: asset.contentType, bytes: asset.bytes, created_at: Math.floor(asset.createdAt / 1000), url: url(asset.id) };
}
