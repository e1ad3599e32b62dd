/**
 * Prometheus metrics (prom-client), one registry per gateway so that several gateways in one
 * process (tests) keep apart. Request-level series are updated where each response is sent, in
 * the hot-path counters of hot-metrics.ts; route health is read from the router when scraped, so
 * it costs nothing between scrapes.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { HotCounter, HotHistogram, type HistogramSeries } from './hot-metrics.js';
import { MICROS_PER_CREDIT } from '../billing/pricing.js';
import type { RouteHealth } from '../routing/route-health.js';

/** What one finished request tells the metrics. */
export interface RequestObservation {
  readonly model: string | undefined;
  readonly route: string | undefined;
  readonly status: number;
  /** The envelope's error.type, for errors. */
  readonly errorType: string | undefined;
  readonly errorCode: string | undefined;
  /** Time the gateway itself spent before the answer's first byte, without the upstream's. */
  readonly overheadMs: number | undefined;
  readonly upstreamFirstByteMs: number | undefined;
  readonly upstreamFirstTokenMs: number | undefined;
}

const CIRCUIT_STATE = { closed: 0, half_open: 1, open: 2 } as const;
const OVERHEAD_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1];
const UPSTREAM_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The model label of requests that named no model of the catalogue. */
export const UNKNOWN_MODEL = 'unknown';

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: HotCounter;
  private readonly overhead: HistogramSeries;
  private readonly firstByte: HotHistogram;
  private readonly firstToken: HotHistogram;
  private readonly rejections: Counter<'code'>;
  private readonly credits: HotCounter;
  readonly shed: Counter<'reason'>;
  private readonly collectRoutes: () => void;

  /**
   * `isModel` tells the catalogue's ids from anything else a caller wrote in `model`: those are
   * counted under "unknown", or every misspelt or made-up name would be a series of its own, for
   * the life of the process.
   */
  constructor(
    routes: () => Iterable<RouteHealth>,
    private readonly isModel: (id: string) => boolean = () => true,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'tollgate_' });
    this.requests = new HotCounter('tollgate_requests_total', 'Requests answered, by model, route (provider/upstream model), HTTP status and error type', ['model', 'route', 'status', 'error_type'], this.registry);
    this.overhead = new HotHistogram('tollgate_gateway_overhead_seconds', "Time the gateway itself added before the answer's first byte (upstream time excluded)", [], OVERHEAD_BUCKETS, this.registry).labels();
    this.firstByte = new HotHistogram('tollgate_upstream_first_byte_seconds', 'Upstream time to first byte: to the whole answer when not streamed, to the response headers when streamed', ['route'], UPSTREAM_BUCKETS, this.registry);
    this.firstToken = new HotHistogram('tollgate_upstream_first_token_seconds', "Upstream time to a stream's first chunk", ['route'], UPSTREAM_BUCKETS, this.registry);
    this.rejections = new Counter({ name: 'tollgate_rate_limit_rejections_total', help: 'Requests refused by a rate limit (429), by the quantity that ran out', labelNames: ['code'], registers });
    this.credits = new HotCounter('tollgate_credits_charged_total', 'Credits charged to accounts, by model', ['model'], this.registry);
    this.shed = new Counter({ name: 'tollgate_load_shed_total', help: 'Requests refused at once because the instance was overloaded or draining', labelNames: ['reason'], registers });
    const circuit = new Gauge({ name: 'tollgate_route_circuit_state', help: 'Circuit breaker per route: 0 closed, 1 half-open, 2 open', labelNames: ['route'], registers });
    const available = new Gauge({ name: 'tollgate_route_available', help: 'Whether the route can take a request now (1) or is open or cooling down (0)', labelNames: ['route'], registers });
    const inFlight = new Gauge({ name: 'tollgate_route_in_flight', help: 'Requests in flight on the route, on this instance', labelNames: ['route'], registers });
    const latency = new Gauge({ name: 'tollgate_route_latency_seconds', help: 'Moving average of the route\'s time to first byte, as used by the least_latency strategy', labelNames: ['route'], registers });
    // Read at scrape time: route health changes on the hot path without touching the metrics.
    this.collectRoutes = (): void => {
      for (const route of routes()) {
        circuit.set({ route: route.key }, CIRCUIT_STATE[route.state]);
        available.set({ route: route.key }, route.availableAt() === 0 ? 1 : 0);
        inFlight.set({ route: route.key }, route.inFlight);
        if (route.latencyMs !== null) latency.set({ route: route.key }, route.latencyMs / 1000);
      }
    };
  }

  observeRequest(o: RequestObservation): void {
    const model = o.model === undefined ? '' : this.isModel(o.model) ? o.model : UNKNOWN_MODEL;
    const route = o.route ?? '';
    const type = o.errorType ?? '';
    this.requests.labels(model, route, String(o.status), type).value++;
    if (o.overheadMs !== undefined) this.overhead.observe(o.overheadMs / 1000);
    if (o.upstreamFirstByteMs !== undefined && route !== '') this.firstByte.labels(route).observe(o.upstreamFirstByteMs / 1000);
    if (o.upstreamFirstTokenMs !== undefined && route !== '') this.firstToken.labels(route).observe(o.upstreamFirstTokenMs / 1000);
    if (o.status === 429 && o.errorCode !== undefined) this.rejections.labels(o.errorCode).inc();
  }

  charged(model: string, micros: number): void {
    this.credits.labels(model).value += micros / MICROS_PER_CREDIT;
  }

  /** The text exposition for GET /metrics. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    this.collectRoutes();
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
