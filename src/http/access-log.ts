/** One log line per request, with its id, caller (by public key id), route and token usage. */
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

export function logAccess(logger: Logger, request: FastifyRequest, status: number, streamEnd?: string): void {
  const clientId = request.headers['x-request-id'] ?? request.headers['x-client-request-id'];
  logger.info(
    {
      request_id: request.id,
      client_request_id: clientId,
      method: request.method,
      path: request.routeOptions.url ?? request.url,
      status,
      ms: Math.round((performance.now() - (request.startedAt ?? performance.now())) * 100) / 100,
      key_id: request.principal?.key.id,
      account: request.principal?.account.id,
      sdk: request.principal ? request.sdk : undefined,
      ...request.audit,
      stream_end: streamEnd,
    },
    'request',
  );
}
