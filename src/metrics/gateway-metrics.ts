/**
 * Prometheus metrics (prom-client), one registry per gateway so that several gateways in one
 * process (tests) keep apart. Request-level series are updated where each response is sent, in
 * the hot-path counters of hot-metrics.ts; route health is read from the router when scraped, so
 * it costs nothing between scrapes.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { HotCounter, HotHistogram, type HistogramSeries } from './hot-metrics.js';
import { MICROS_PER_CREDIT } from '../billing/pricing.js';
import type { RouteHealth } from '../routing/route-health.js';
import type { SettlementObserver } from '../billing/settlement-writer.js';

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
/** A commit on SQLite takes tens of microseconds to a few milliseconds; on PostgreSQL, a round trip or more. */
const COMMIT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2.5];
/** A restart of SQLite's write-ahead log holds the commits for a few milliseconds, longer on a slow disk. */
const PAUSE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];

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
   * The accounting's writes, for the settlement writer. How many requests a commit carries is
   * tollgate_settlements_committed_total over tollgate_settlement_commit_seconds_count.
   */
  readonly settlements: SettlementObserver;
  private readonly writePauses: Histogram;
  private backlogOf: () => number = () => 0;

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
    // At a low rate every request makes a commit of its own: the hot-path series, not prom-client's.
    const commitSeconds = new HotHistogram('tollgate_settlement_commit_seconds', 'Time each write of finished requests (charges, usage records) to the store took; answers of charged requests wait for theirs', [], COMMIT_BUCKETS, this.registry).labels();
    const committed = new HotCounter('tollgate_settlements_committed_total', 'Finished requests (charges, usage records) written to the store', [], this.registry).labels();
    const commitFailures = new Counter({ name: 'tollgate_settlement_commit_failures_total', help: 'Writes of finished requests to the store that failed and are being retried', registers });
    this.settlements = {
      committed: (count, ms) => {
        commitSeconds.observe(ms / 1000);
        committed.value += count;
      },
      failed: () => commitFailures.inc(),
    };
    const backlogNow = (): number => this.backlogOf();
    new Gauge({
      name: 'tollgate_settlement_backlog',
      help: 'Finished requests (charges, usage records) waiting to be written to the store',
      registers,
      collect() {
        this.set(backlogNow());
      },
    });
    this.writePauses = new Histogram({ name: 'tollgate_store_write_pause_seconds', help: "How long each restart of SQLite's write-ahead log held the store's writes (SQLite only)", buckets: PAUSE_BUCKETS, registers });
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

  /** Where the backlog gauge reads its value at scrape time. */
  watchBacklog(backlog: () => number): void {
    this.backlogOf = backlog;
  }

  storeWritePaused(ms: number): void {
    this.writePauses.observe(ms / 1000);
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
