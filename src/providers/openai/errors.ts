/**
 * Reading the error an OpenAI-compatible server sends, in any of the shapes seen in practice, and
 * turning it into a GatewayError. The status-to-code mapping itself lives in upstream-faults.ts.
 */
import { GatewayError, scrubSecrets } from '../../errors/index.js';
import { headerValue, readBodyText, type UpstreamResponse } from '../upstream/upstream-client.js';
import { upstreamStatusError } from '../upstream/upstream-faults.js';
import type { CancelSignal } from '../../util/cancellation.js';

export interface UpstreamErrorDetail {
  message: string | undefined;
  param: string | null;
}

const NO_DETAIL: UpstreamErrorDetail = { message: undefined, param: null };
const MAX_STREAM_MESSAGE = 500;

/**
 * OpenAI and current vLLM/Ollama send `{"error":{"message","type","param","code"}}`; older vLLM
 * sends the same fields at the top level with `"object":"error"`; Ollama's native routes and some
 * proxies send `{"error":"text"}`; FastAPI-based servers send `{"detail": ...}`.
 */
export function errorDetail(value: unknown): UpstreamErrorDetail {
  if (typeof value !== 'object' || value === null) return NO_DETAIL;
  const body = value as Record<string, unknown>;
  const inner = body.error;
  if (typeof inner === 'string') return { message: inner, param: null };
  const source = typeof inner === 'object' && inner !== null ? (inner as Record<string, unknown>) : body;
  const message = typeof source.message === 'string' ? source.message : typeof body.detail === 'string' ? body.detail : undefined;
  const param = typeof source.param === 'string' ? source.param : null;
  return { message, param };
}

export function parseErrorBody(text: string): UpstreamErrorDetail {
  if (text.charCodeAt(0) !== 123 /* { */) return NO_DETAIL;
  try {
    return errorDetail(JSON.parse(text));
  } catch {
    return NO_DETAIL;
  }
}

/** A server that echoes the gateway's credential back must not get it relayed to a caller or a log. */
export function redact(message: string | undefined, apiKey: string | undefined): string | undefined {
  if (message === undefined) return undefined;
  const withoutKey = apiKey === undefined || apiKey === '' ? message : message.split(apiKey).join('[redacted]');
  // Then every other credential kept (a configured header's), before any caller cuts the text.
  return scrubSecrets(withoutKey);
}

/** Reads a non-2xx answer's body and maps it; the body is consumed so the connection is reusable. */
export async function statusError(
  providerId: string,
  apiKey: string | undefined,
  res: UpstreamResponse,
  signal: CancelSignal,
): Promise<GatewayError> {
  return statusErrorOf(providerId, apiKey, res.status, res.headers, await readBodyText(res, signal));
}

/** Maps a non-2xx answer whose body has been read. */
export function statusErrorOf(providerId: string, apiKey: string | undefined, status: number, headers: UpstreamResponse['headers'], body: string): GatewayError {
  const detail = parseErrorBody(body);
  return upstreamStatusError(providerId, status, redact(detail.message, apiKey), headerValue(headers, 'retry-after'), detail.param);
}

/** An error the upstream reported inside a 2xx answer (an SSE error frame or an error-shaped body). */
export function reportedError(providerId: string, apiKey: string | undefined, detail: UpstreamErrorDetail): GatewayError {
  const message = redact(detail.message, apiKey)?.slice(0, MAX_STREAM_MESSAGE);
  return new GatewayError(
    'upstream_error',
    message ? `Provider "${providerId}" reported an error: ${message}` : `Provider "${providerId}" reported an error without a message.`,
  );
}

export function malformed(providerId: string, what: string, cause?: unknown): GatewayError {
  return new GatewayError('upstream_malformed_response', `Provider "${providerId}" returned ${what}.`, cause === undefined ? {} : { cause });
}
