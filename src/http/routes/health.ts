/** Liveness outside /v1, unauthenticated: the process is up and its event loop answers. */
import type { FastifyInstance } from 'fastify';

export function healthRoutes(app: FastifyInstance): void {
  app.get('/healthz', (_request, reply) => reply.send({ status: 'ok' }));
}
