/**
 * A store that fails or times out on a request's path (its key's first lookup, its credit hold)
 * is an outage of a dependency, not a fault of the gateway's code: 503 with Retry-After, which
 * clients retry, and a warning with the cause, instead of a 500.
 */
import { GatewayError } from '../errors/index.js';

const RETRY_AFTER_SECONDS = 1;

export function storeUnavailable(cause: unknown): GatewayError {
  if (cause instanceof GatewayError) return cause;
  return new GatewayError('store_unavailable', undefined, { retryAfterSeconds: RETRY_AFTER_SECONDS, cause });
}
