/**
 * The one place where upstream failures become gateway errors: transport faults (undici's stable
 * error codes) and upstream HTTP statuses. Adapters extract the provider's own error message and
 * hand it here; the mapping to the spec's table is the same for every provider.
 */
import { GatewayError, scrubSecrets } from '../../errors/index.js';
import type { CancelSignal } from '../../util/cancellation.js';

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE',
  'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_DESTROYED',
]);
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const cause = (err as { cause?: unknown }).cause;
  return cause === err ? undefined : errorCode(cause);
}

/**
 * Maps a thrown transport error. When the call's signal was aborted, the abort's reason wins: the
 * pipeline aborts with the GatewayError it wants to answer (a timeout), or the caller went away.
 */
export function upstreamFault(err: unknown, signal: CancelSignal): GatewayError {
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof GatewayError) return reason;
    return new GatewayError('upstream_unreachable', 'The request was cancelled before the upstream answered.', { cause: err });
  }
  if (err instanceof GatewayError) return err;
  const code = errorCode(err);
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new GatewayError('upstream_timeout', undefined, { cause: err });
  }
  if (code !== undefined && UNREACHABLE_CODES.has(code)) {
    return new GatewayError('upstream_unreachable', undefined, { cause: err });
  }
  return new GatewayError('upstream_error', undefined, { cause: err });
}

/** Parses Retry-After (seconds or an HTTP date) into seconds, or undefined. */
export function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds : undefined;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, (date - Date.now()) / 1000);
}

const MAX_RELAYED_MESSAGE = 500;

/**
 * Maps an upstream HTTP error status. Only a 4xx that blames the request itself is relayed to the
 * caller with the upstream's message; an upstream 401/403 means our provider key is wrong, which
 * is the gateway's fault (502), never the caller's.
 */
export function upstreamStatusError(
  providerId: string,
  status: number,
  upstreamMessage: string | undefined,
  retryAfterHeader?: string,
  upstreamParam?: string | null,
): GatewayError {
  const retryAfterSeconds = parseRetryAfter(retryAfterHeader);
  // Scrubbed before it is cut: a secret cut in two would no longer be found whole.
  const detail = upstreamMessage ? scrubSecrets(upstreamMessage).slice(0, MAX_RELAYED_MESSAGE) : undefined;
  switch (status) {
    case 400:
    case 413:
    case 422:
      return new GatewayError(
        'upstream_rejected_request',
        `The upstream provider rejected the request: ${detail ?? `status ${status}`}`,
        { param: fieldPathOf(upstreamParam) },
      );
    case 401:
    case 403:
      return new GatewayError('upstream_auth_failed', `Provider "${providerId}" refused the gateway's credentials (upstream status ${status}).`);
    case 408:
    case 504:
      return new GatewayError('upstream_timeout', `Provider "${providerId}" timed out (upstream status ${status}).`);
    case 429:
    case 503:
    case 529:
      return new GatewayError(
        'upstream_unavailable',
        `Provider "${providerId}" is overloaded or rate limiting the gateway (upstream status ${status}).`,
        retryAfterSeconds === undefined ? {} : { retryAfterSeconds },
      );
    default:
      return new GatewayError('upstream_error', `Provider "${providerId}" failed with upstream status ${status}.`);
  }
}

/**
 * An upstream's `param` is relayed only when it names a request field (`messages[0].content`,
 * `tools.0.function.name`): it is the upstream's text, and anything else in it (an echoed header,
 * a sentence) is not the caller's field.
 */
function fieldPathOf(param: string | null | undefined): string | null {
  return typeof param === 'string' && /^[A-Za-z_][A-Za-z0-9_.[\]-]{0,127}$/.test(param) ? param : null;
}
