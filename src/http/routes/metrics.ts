/**
 * GET /metrics: the Prometheus text exposition. Route names and traffic are operator
 * information, so when an admin token is configured the scrape must present it (Prometheus:
 * `authorization: {credentials: ...}`); without one (a single-user, loopback setup) it is open.
 */
import type { FastifyInstance } from 'fastify';
import { adminTokenCheck } from '../../admin/admin-token.js';
import type { GatewayMetrics } from '../../metrics/gateway-metrics.js';

export function metricsRoutes(app: FastifyInstance, metrics: GatewayMetrics, adminToken: string | undefined): void {
  const check = adminToken === undefined ? null : adminTokenCheck(adminToken);
  app.get('/metrics', async (request, reply) => {
    check?.(request.headers.authorization);
    const { contentType, body } = await metrics.scrape();
    return reply.header('x-request-id', request.id).header('content-type', contentType).header('cache-control', 'no-store').send(body);
  });
}
