/**
 * Gemini's errors are Google API errors: `{"error":{"code":400,"message":"…","status":"INVALID_ARGUMENT",
 * "details":[…]}}`, sometimes wrapped in a one-element array by the streaming endpoint. Statuses go
 * through the shared table in upstream-faults; what is Gemini-specific lives here: a rejected key
 * arrives as a 400, a quota refusal names its wait in `details`, and an error can also arrive as a
 * stream event or a 200 body.
 */
import { GatewayError, scrubSecrets } from '../../errors/index.js';
import { upstreamStatusError } from '../upstream/upstream-faults.js';

export interface ErrorContext {
  readonly providerId: string;
  /** Only to scrub it from relayed upstream messages. */
  readonly apiKey: string | undefined;
}

export interface GeminiErrorDetail {
  code: number | undefined;
  /** The gRPC status name, e.g. RESOURCE_EXHAUSTED. */
  status: string | undefined;
  message: string | undefined;
  /** google.rpc.ErrorInfo's reason, e.g. API_KEY_INVALID. */
  reason: string | undefined;
  /** google.rpc.RetryInfo's retryDelay, in seconds. */
  retryDelaySeconds: number | undefined;
}

const NO_DETAIL: GeminiErrorDetail = { code: undefined, status: undefined, message: undefined, reason: undefined, retryDelaySeconds: undefined };
const MAX_STREAM_MESSAGE = 500;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function malformed(providerId: string, what: string, cause?: unknown): GatewayError {
  return new GatewayError('upstream_malformed_response', `Provider "${providerId}" returned ${what}.`, cause === undefined ? {} : { cause });
}

export function parseJson(providerId: string, text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw malformed(providerId, `${what} that is not valid JSON`, err);
  }
}

/** Reads the `error` object of a parsed body (or of its first element); never throws. */
export function errorDetail(value: unknown): GeminiErrorDetail {
  const body = Array.isArray(value) ? (value as unknown[])[0] : value;
  const error = isRecord(body) ? body.error : undefined;
  if (!isRecord(error)) return NO_DETAIL;
  const detail: GeminiErrorDetail = {
    code: typeof error.code === 'number' ? error.code : undefined,
    status: typeof error.status === 'string' ? error.status : undefined,
    message: typeof error.message === 'string' && error.message !== '' ? error.message : undefined,
    reason: undefined,
    retryDelaySeconds: undefined,
  };
  for (const item of Array.isArray(error.details) ? (error.details as unknown[]) : []) {
    if (!isRecord(item) || typeof item['@type'] !== 'string') continue;
    if (item['@type'].endsWith('google.rpc.ErrorInfo') && typeof item.reason === 'string') detail.reason = item.reason;
    if (item['@type'].endsWith('google.rpc.RetryInfo')) detail.retryDelaySeconds = durationSeconds(item.retryDelay);
  }
  return detail;
}

/** Never throws: an error body we cannot read still has to become the status's error. */
export function parseErrorBody(text: string): GeminiErrorDetail {
  try {
    return errorDetail(JSON.parse(text));
  } catch {
    return NO_DETAIL;
  }
}

/** A protobuf Duration in JSON: "58s", "1.5s". */
function durationSeconds(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return match === null ? undefined : Number(match[1]);
}

/** Google echoes a rejected key in some error details; it must not reach a caller or a log. */
export function redact(message: string | undefined, apiKey: string | undefined): string | undefined {
  if (message === undefined) return undefined;
  const withoutKey = apiKey === undefined || apiKey === '' ? message : message.split(apiKey).join('[redacted]');
  // Then every other credential kept (a configured header's), before any caller cuts the text.
  return scrubSecrets(withoutKey);
}

/** Maps a non-2xx answer. Retry-After wins over RetryInfo, which Gemini sends instead of the header. */
export function geminiStatusError(ctx: ErrorContext, status: number, bodyText: string, retryAfterHeader: string | undefined): GatewayError {
  const detail = parseErrorBody(bodyText);
  const message = redact(detail.message, ctx.apiKey);
  // A key Gemini does not accept comes back as 400 INVALID_ARGUMENT, which would blame the caller
  // for the gateway's credential; it is an authentication failure.
  if (detail.reason?.startsWith('API_KEY_') === true || detail.status === 'UNAUTHENTICATED') {
    return upstreamStatusError(ctx.providerId, status === 403 ? 403 : 401, message);
  }
  // A 400 FAILED_PRECONDITION is about the gateway's account (region, billing), never the request.
  if (detail.status === 'FAILED_PRECONDITION') {
    return new GatewayError('upstream_error', `Provider "${ctx.providerId}" cannot serve the gateway's account: ${message?.slice(0, MAX_STREAM_MESSAGE) ?? `status ${status}`}`);
  }
  const retryAfter = retryAfterHeader ?? (detail.retryDelaySeconds === undefined ? undefined : String(detail.retryDelaySeconds));
  return upstreamStatusError(ctx.providerId, status, message, retryAfter);
}

/**
 * An error reported inside a 200: a stream event or an error-shaped body. There is no status to
 * map, so only overload and quota (worth retrying elsewhere) are told apart from plain failures.
 */
export function geminiReportedError(ctx: ErrorContext, detail: GeminiErrorDetail): GatewayError {
  const message = redact(detail.message, ctx.apiKey)?.slice(0, MAX_STREAM_MESSAGE) ?? detail.status ?? 'unknown error';
  if (detail.code === 429 || detail.code === 503 || detail.status === 'RESOURCE_EXHAUSTED' || detail.status === 'UNAVAILABLE') {
    return new GatewayError(
      'upstream_unavailable',
      `Provider "${ctx.providerId}" is overloaded or rate limiting the gateway: ${message}`,
      detail.retryDelaySeconds === undefined ? {} : { retryAfterSeconds: detail.retryDelaySeconds },
    );
  }
  return new GatewayError('upstream_error', `Provider "${ctx.providerId}" reported an error: ${message}`);
}
