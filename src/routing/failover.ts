/**
 * What an upstream failure means for routing. Faults of the route (unreachable, 5xx, unusable
 * answers, a refused provider key, overload, timeouts) move a request to the next route while
 * nothing has been sent to the caller, and count against the route's circuit breaker; an overload
 * with Retry-After cools the route down for that long instead. Faults of the request itself (an
 * upstream 400), of the gateway (500) or of the caller (gone, out of budget) do neither.
 */
import type { GatewayError } from '../errors/index.js';
import type { RouteHealth } from './route-health.js';

const ROUTE_FAULTS = new Set<string>([
  'upstream_error',
  'upstream_malformed_response',
  'upstream_auth_failed',
  'upstream_unreachable',
  'upstream_stream_truncated',
  'upstream_unavailable',
  'upstream_timeout',
]);

export function isRouteFault(error: GatewayError): boolean {
  return ROUTE_FAULTS.has(error.code);
}

/** Records a failed attempt on its route's health. */
export function noteRouteFault(health: RouteHealth, error: GatewayError): void {
  if (!ROUTE_FAULTS.has(error.code)) return;
  // A pause of nothing (Retry-After: 0, or a date already past) is no pause: a plain failure, or
  // such a route would never count one.
  if (error.code === 'upstream_unavailable' && error.retryAfterSeconds !== undefined && error.retryAfterSeconds > 0) health.coolDown(error.retryAfterSeconds);
  else health.failed();
}
