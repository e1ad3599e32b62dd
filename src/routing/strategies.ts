/**
 * How routes of the same priority are ordered for one request:
 * - `weighted`: a random order drawn by weight (a route with weight 3 comes first three times as
 *   often as one with weight 1), spreading traffic in proportion;
 * - `priority`: the order of the configuration;
 * - `least_latency`: fastest moving average of time to first byte first (unmeasured routes first,
 *   so that each gets measured);
 * - `fewest_in_flight`: fewest requests in flight on this instance first.
 */
import type { Strategy } from '../config/schema.js';
import type { RouteTarget } from './router.js';

/** Appends `group` to `out` in the strategy's order. */
export function orderGroup(group: readonly RouteTarget[], strategy: Strategy, out: RouteTarget[], random: () => number = Math.random): void {
  if (group.length === 1) {
    out.push(group[0]!);
    return;
  }
  switch (strategy) {
    case 'priority':
      out.push(...group);
      return;
    case 'weighted':
      weightedOrder(group, out, random);
      return;
    case 'least_latency':
      out.push(...[...group].sort((a, b) => (a.health.latencyMs ?? -1) - (b.health.latencyMs ?? -1)));
      return;
    case 'fewest_in_flight':
      out.push(...[...group].sort((a, b) => a.health.inFlight - b.health.inFlight));
      return;
  }
}

/** Draws without replacement, each pick in proportion to the weights left. */
function weightedOrder(group: readonly RouteTarget[], out: RouteTarget[], random: () => number): void {
  const left = [...group];
  let total = left.reduce((sum, r) => sum + r.weight, 0);
  while (left.length > 1) {
    let point = random() * total;
    let i = 0;
    while (i < left.length - 1 && point >= left[i]!.weight) point -= left[i++]!.weight;
    const [picked] = left.splice(i, 1);
    out.push(picked!);
    total -= picked!.weight;
  }
  out.push(left[0]!);
}
