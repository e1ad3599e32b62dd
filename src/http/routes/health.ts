/**
 * Probes outside /v1, unauthenticated, never shed: liveness (`/healthz`: the process is up and its
 * event loop answers) and readiness (`/readyz`: this instance should get traffic, see
 * src/http/readiness.ts).
 */
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../errors/index.js';
import type { Readiness } from '../readiness.js';
import { sendError } from '../send-error.js';

export function healthRoutes(app: FastifyInstance, readiness: Readiness): void {
  app.get('/healthz', (request, reply) => reply.header('x-request-id', request.id).send({ status: 'ok' }));

  app.get('/readyz', async (request, reply) => {
    const report = await readiness.check();
    reply.header('cache-control', 'no-store');
    if (!report.ready) {
      return sendError(reply, new GatewayError('not_ready', `This gateway instance is not ready: ${report.failures.join('; ')}.`, { retryAfterSeconds: 1 }));
    }
    return reply.header('x-request-id', request.id).send({ status: 'ready', checks: report.checks });
  });
}
