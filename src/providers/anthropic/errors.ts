/**
 * Anthropic's error bodies, `{"type":"error","error":{"type":...,"message":...}}`, both as an
 * HTTP error response and as an `error` event inside a stream. Statuses are mapped by the shared
 * table in upstream-faults; only the provider-specific parsing lives here.
 */
import { GatewayError } from '../../errors/index.js';
import { upstreamStatusError } from '../upstream/upstream-faults.js';
import { isRecord } from './response.js';

export interface AnthropicErrorDetail {
  type: string | undefined;
  message: string | undefined;
}

/** Never throws: an error body we cannot read still has to become the status's error. */
export function parseErrorBody(text: string): AnthropicErrorDetail {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { type: undefined, message: undefined };
  }
  const error = isRecord(body) ? body.error : undefined;
  if (!isRecord(error)) return { type: undefined, message: undefined };
  return {
    type: typeof error.type === 'string' ? error.type : undefined,
    message: typeof error.message === 'string' && error.message !== '' ? error.message : undefined,
  };
}

export function anthropicStatusError(providerId: string, status: number, bodyText: string, retryAfter: string | undefined): GatewayError {
  const { type, message } = parseErrorBody(bodyText);
  // Anthropic reports the gateway's own account running out of credit as a 400
  // invalid_request_error. It is not the caller's request that is wrong: another route may serve
  // it, and the provider's billing message is for the operator, not the caller.
  if (status === 400 && type === 'invalid_request_error' && message !== undefined && CREDIT_EXHAUSTED.test(message)) {
    return new GatewayError('upstream_error', `Provider "${providerId}" cannot serve the gateway's account: its credit balance with the provider is too low.`);
  }
  return upstreamStatusError(providerId, status, message, retryAfter);
}

const CREDIT_EXHAUSTED = /credit balance is too low/i;

/**
 * An `error` event arrives after the 200 was sent, so there is no status to map: overload and
 * rate limiting are the kinds worth retrying elsewhere (503 upstream_unavailable, as their HTTP
 * statuses 529 and 429 are), anything else is a plain upstream failure.
 */
export function anthropicStreamError(providerId: string, data: string): GatewayError {
  const { type, message } = parseErrorBody(data);
  const detail = message ?? type ?? 'unknown error';
  if (type === 'rate_limit_error') {
    return new GatewayError('upstream_unavailable', `Provider "${providerId}" is rate limiting the gateway and stopped the stream: ${detail}`);
  }
  if (type === 'overloaded_error') {
    return new GatewayError('upstream_unavailable', `Provider "${providerId}" is overloaded and stopped the stream: ${detail}`);
  }
  return new GatewayError('upstream_error', `Provider "${providerId}" failed during the stream: ${detail}`);
}
