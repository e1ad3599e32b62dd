/**
 * What a blob store's calls reject with once its close has begun. The instance is shutting down,
 * so this is a 503 `shutting_down` whose retry reaches another instance, not a fault of the
 * gateway's (a 500 and an "unexpected fault" in the log).
 */
import { GatewayError } from '../../errors/index.js';

const RETRY_AFTER_SECONDS = 1;

export function blobStoreClosed(): GatewayError {
  return new GatewayError('shutting_down', 'The blob store is closed: this gateway instance is shutting down; send the request again.', { retryAfterSeconds: RETRY_AFTER_SECONDS });
}
