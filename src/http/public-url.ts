/**
 * The gateway's own base URL as a caller reaches it, for links in responses (asset URLs):
 * `server.public_url` when set (behind a proxy that rewrites the host), else the request's own
 * scheme and Host.
 */
import type { FastifyRequest } from 'fastify';

export function assetUrlFor(request: FastifyRequest, publicUrl: string | undefined): (assetId: string) => string {
  const base = publicUrl?.replace(/\/+$/, '') ?? `${request.protocol}://${request.host}`;
  return (assetId) => `${base}/v1/assets/${assetId}/content`;
}
