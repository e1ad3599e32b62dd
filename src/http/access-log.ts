/** One log line per request, with its id, caller (by public key id), route and token usage. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccessLogWriter } from '../logging/logger.js';
import { elapsedMs } from './request-timing.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { STATUS_TABLE, type ErrorStatus } from '../errors/status-table.js';
import { maskKeysIn } from '../auth/key-shape.js';

const MAX_LOGGED_MODEL = 256;

/** Called where each response is sent: cheaper than a Fastify onResponse hook, which costs more per request than the line itself. */
export type AccessLog = (reply: FastifyReply, status: number, streamEnd?: string) => void;

/** The access line and the request metrics, both written where each response is sent. */
export function accessLogFor(writer: AccessLogWriter | null, metrics: GatewayMetrics | null = null): AccessLog {
  const log: AccessLog = writer === null ? () => undefined : (reply, status, streamEnd) => writer.write(recordOf(reply.request, status, Math.round(elapsedMs(reply.request, reply.elapsedTime) * 100) / 100, streamEnd));
  if (metrics === null) return log;
  return (reply, status, streamEnd) => {
    log(reply, status, streamEnd);
    metrics.observeRequest(observationOf(reply.request, status));
  };
}

function observationOf(request: FastifyRequest, status: number) {
  const audit = request.audit ?? {};
  return {
    model: audit.model,
    route: audit.provider === undefined ? undefined : `${audit.provider}/${audit.upstreamModel ?? ''}`,
    status,
    errorType: status >= 400 ? STATUS_TABLE[status as ErrorStatus]?.type : undefined,
    errorCode: audit.errorCode,
    overheadMs: audit.overheadMs,
    upstreamFirstByteMs: audit.upstreamFirstByteMs,
    upstreamFirstTokenMs: audit.upstreamFirstTokenMs,
  };
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
    // An unknown path without its query string, where a misplaced token would otherwise be kept.
    path: request.routeOptions.url ?? pathOf(request.url),
    status,
    ms,
    keyId: principal?.key.id,
    account: principal?.account.id,
    sdk: principal ? request.sdk : undefined,
    // The caller's own words until the model is found: bounded, so a huge one cannot bloat the line.
    model: audit.model === undefined || audit.model.length <= MAX_LOGGED_MODEL ? audit.model : `${audit.model.slice(0, MAX_LOGGED_MODEL)}…`,
    provider: audit.provider,
    upstreamModel: audit.upstreamModel,
    promptTokens: audit.promptTokens,
    completionTokens: audit.completionTokens,
    errorCode: audit.errorCode,
    streamEnd,
  };
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  // A key pasted where an id belongs (`/admin/v1/key/sk-tg-…`) must not reach the log whole.
  return maskKeysIn(query === -1 ? url : url.slice(0, query));
}
