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

export function failedSettlement(err: unknown): { tokens: number | null; failed: boolean } {
  return { tokens: err instanceof GatewayError && NOTHING_USED.has(err.code) ? 0 : null, failed: true };
}
