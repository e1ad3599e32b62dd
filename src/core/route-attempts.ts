/**
 * Failover: the plan's routes are called in turn, each attempt under the request's deadlines,
 * until one answers or a failure is not the route's (an upstream 400, the gateway's own fault, a
 * caller gone, a budget spent). Every attempt tells its route's health how it went.
 */
import { GatewayError, retryableAfter, toGatewayError } from '../errors/index.js';
import type { RoutePlan, RouteTarget } from '../routing/router.js';
import type { RouteHealth } from '../routing/route-health.js';
import { isRouteFault, noteRouteFault } from '../routing/failover.js';
import type { Cancellation, CancelSignal } from '../util/cancellation.js';
import { AttemptCancellation, type CallDeadlines } from './deadlines.js';

export interface ServedBy {
  provider: string;
  upstreamModel: string;
}

export interface AttemptContext {
  /** The request's one controller: aborted when the caller goes away or a deadline passes. */
  readonly controller: Cancellation;
  /** Set here: the route of the latest attempt, also when the request fails. */
  lastRoute?: ServedBy;
}

export interface Answered<T> {
  readonly result: T;
  readonly servedBy: ServedBy;
  /** Time the answering attempt took. */
  readonly upstreamMs: number;
}

export interface HeldAnswer<T> extends Answered<T> {
  /** Ends the answering attempt: its timers, its tie to the request, the route's in-flight count. */
  readonly release: () => void;
  /** With `judgedAtEnd`: the answer (a stream) ran to its end, a success for the route's breaker. */
  readonly completed: () => void;
  /** Cancels the answering attempt (its upstream call), for an answer nobody will read. */
  readonly cancel: (reason: unknown) => void;
}

const nothing = (): void => undefined;

/**
 * Throws the last attempt's failure as a GatewayError; after a 502/503/504 the plan remembers the
 * routes that failed the caller. With `hold`, for a call whose answer goes on after it resolves (a
 * stream, resolved at its first chunk), the answering attempt keeps its route's in-flight count
 * and its tie to the request until `release`; without, it ends as the call resolves. With
 * `judgedAtEnd` (a stream), the first chunk does not count as the route's success: `completed`
 * does, while a fault mid-way is noted as the route's failure by the caller.
 */
export async function callRoutes<T>(
  routes: RoutePlan,
  first: RouteTarget,
  ctx: AttemptContext,
  deadlines: CallDeadlines,
  call: (route: RouteTarget, signal: CancelSignal) => Promise<T>,
  hold = false,
  judgedAtEnd = false,
): Promise<HeldAnswer<T>> {
  let route = first;
  for (;;) {
    const attempt = new AttemptCancellation(ctx.controller);
    deadlines.startAttempt(attempt);
    const servedBy = { provider: route.provider, upstreamModel: route.upstreamModel };
    ctx.lastRoute = servedBy;
    const started = performance.now();
    try {
      const result = await call(route, attempt.signal);
      const upstreamMs = performance.now() - started;
      if (judgedAtEnd) route.health.answered(upstreamMs);
      else route.health.succeeded(upstreamMs);
      routes.forget();
      const answering = route;
      const release = (): void => {
        deadlines.clear();
        attempt.detach();
        answering.health.release();
      };
      if (!hold) release();
      return {
        result,
        servedBy,
        upstreamMs,
        release: hold ? release : nothing,
        completed: judgedAtEnd ? () => answering.health.streamCompleted() : nothing,
        cancel: (reason) => attempt.abort(reason),
      };
    } catch (err) {
      attempt.detach();
      attempt.abort(err);
      route.health.release();
      const error = toGatewayError(err);
      const callerGone = ctx.controller.aborted;
      if (!callerGone) noteRouteFault(route.health, error);
      if (!callerGone && isRouteFault(error)) {
        routes.failed.push(route);
        const next = routes.next();
        if (next !== null) {
          route = next;
          continue;
        }
      }
      deadlines.clear();
      if (error.status === 502 || error.status === 503 || error.status === 504) routes.remember();
      throw withinCoolDown(error, route.health);
    }
  }
}

/**
 * An upstream's Retry-After is relayed no longer than the route's own cool-down: the official SDK
 * sleeps for whatever it is told (an hour for `Retry-After: 3600`), while the gateway itself tries
 * the route again, or another one, much sooner. Past a minute it comes with `x-should-retry:
 * false` (retryableAfter): two retries of the official SDK after a five-minute cool-down would
 * hold its caller for ten minutes before failing.
 */
function withinCoolDown(error: GatewayError, health: RouteHealth): GatewayError {
  if (error.retryAfterSeconds === undefined) return error;
  const wait = Math.min(error.retryAfterSeconds, health.maxRetryAfterSeconds);
  const shouldRetry = retryableAfter(wait, error.shouldRetry);
  if (wait === error.retryAfterSeconds && shouldRetry === error.shouldRetry) return error;
  return new GatewayError(error.code, error.message, { param: error.param, retryAfterSeconds: wait, shouldRetry, headers: error.headers, cause: error });
}
