/** Liveness outside /v1, unauthenticated: the process is up and its event loop answers. */
import type { FastifyInstance } from 'fastify';

export function healthRoutes(app: FastifyInstance): void {
  app.get('/healthz', (request, reply) => reply.header('x-request-id', request.id).send({ status: 'ok' }));
}
