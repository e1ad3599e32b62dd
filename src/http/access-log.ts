/** One log line per request, with its id, caller (by public key id), route and token usage. */
// The logger passed here is the access logger (src/logging/logger.ts): keep every field free of secrets.
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

export function logAccess(logger: Logger, request: FastifyRequest, status: number, streamEnd?: string): void {
  const principal = request.principal;
  const audit = request.audit;
  logger.info(
    {
      request_id: request.id,
      client_request_id: request.headers['x-request-id'] ?? request.headers['x-client-request-id'],
      method: request.method,
      path: request.routeOptions.url ?? request.url,
      status,
      ms: Math.round((performance.now() - request.startedAt) * 100) / 100,
      key_id: principal?.key.id,
      account: principal?.account.id,
      sdk: principal ? request.sdk : undefined,
      model: audit.model,
      provider: audit.provider,
      upstream_model: audit.upstreamModel,
      prompt_tokens: audit.promptTokens,
      completion_tokens: audit.completionTokens,
      error_code: audit.errorCode,
      stream_end: streamEnd,
    },
    'request',
  );
}
