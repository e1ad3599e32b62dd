/**
 * The gateway's own base URL as a caller reaches it, for links in responses (asset URLs):
 * `server.public_url` when set (behind a proxy that rewrites the host), else the request's own
 * scheme and Host, else (an HTTP/1.0 request may send no Host) the address it reached.
 */
import type { FastifyRequest } from 'fastify';

export function assetUrlFor(request: FastifyRequest, publicUrl: string | undefined): (assetId: string) => string {
  const base = publicUrl?.replace(/\/+$/, '') ?? `${request.protocol}://${hostOf(request)}`;
  return (assetId) => `${base}/v1/assets/${assetId}/content`;
}

function hostOf(request: FastifyRequest): string {
  if (request.host !== '') return request.host;
  const { localAddress, localPort } = request.socket;
  if (localAddress === undefined) return 'localhost';
  const address = localAddress.startsWith('::ffff:') ? localAddress.slice(7) : localAddress;
  return `${address.includes(':') ? `[${address}]` : address}:${localPort ?? ''}`;
}
