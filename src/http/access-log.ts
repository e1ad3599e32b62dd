/** One log line per request, with its id, caller (by public key id), route and token usage. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccessLogWriter } from '../logging/logger.js';

/** Called where each response is sent: cheaper than a Fastify onResponse hook, which costs more per request than the line itself. */
export type AccessLog = (reply: FastifyReply, status: number, streamEnd?: string) => void;

export function accessLogFor(writer: AccessLogWriter | null): AccessLog {
  return writer === null ? () => undefined : (reply, status, streamEnd) => writer.write(recordOf(reply.request, status, Math.round(reply.elapsedTime * 100) / 100, streamEnd));
}

function recordOf(request: FastifyRequest, status: number, ms: number, streamEnd: string | undefined) {
  const principal = request.principal;
  const audit = request.audit ?? {};
  const clientId = request.headers['x-request-id'] ?? request.headers['x-client-request-id'];
  return {
    requestId: request.id,
    clientRequestId: Array.isArray(clientId) ? clientId[0] : clientId,
    method: request.method,
    // The route pattern, not the raw URL, for known routes: ids in paths stay out of the log keys.
    path: request.routeOptions.url ?? request.url,
    status,
    ms,
    keyId: principal?.key.id,
    account: principal?.account.id,
    sdk: principal ? request.sdk : undefined,
    model: audit.model,
    provider: audit.provider,
    upstreamModel: audit.upstreamModel,
    promptTokens: audit.promptTokens,
    completionTokens: audit.completionTokens,
    errorCode: audit.errorCode,
    streamEnd,
  };
}
