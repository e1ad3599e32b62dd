/** What a failed call means for the caller's answer and for its rate-limit settlement, whatever the modality. */
import { GatewayError, toGatewayError } from '../errors/index.js';

/** The error with the admitted request's rate-limit headers added. */
export function withHeaders(err: unknown, headers: Readonly<Record<string, string>>): GatewayError {
  const error = toGatewayError(err);
  Object.assign(error.headers, headers);
  return error;
}

/** Errors where the upstream said no or could not be reached used no tokens; after others (timeouts, a caller gone) the upstream may have worked, so the reservation stands. */
const NOTHING_USED = new Set<string>(['upstream_error', 'upstream_unavailable', 'upstream_unreachable', 'upstream_auth_failed', 'upstream_rejected_request', 'capability_not_implemented']);

/**
 * Refusals of the request itself after it was admitted (an adapter that cannot send these values
 * together, a prompt over the context window, a capability the adapter lacks, an upstream 400):
 * nothing was generated, so the tokens reserved for it are given back.
 */
const REFUSED = new Set<number>([400, 404, 413, 422, 501]);

export function failedSettlement(err: unknown): { tokens: number | null; failed: boolean } {
  const nothingUsed = err instanceof GatewayError && (NOTHING_USED.has(err.code) || REFUSED.has(err.status));
  return { tokens: nothingUsed ? 0 : null, failed: true };
}
