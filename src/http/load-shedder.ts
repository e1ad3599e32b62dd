/**
 * Load shedding and draining for one instance, in front of Fastify: the node:http request listener
 * answers 503 by itself, before any routing, authentication or body parsing, while this process
 * has `max_in_flight` requests running, while its event loop lags more than
 * `max_event_loop_delay_ms` (`gateway_overloaded`), and while it drains for shutdown
 * (`shutting_down`). Probes (/healthz, /readyz, /metrics) are neither counted nor refused.
 *
 * The hot path costs one counter, one boolean and one 'close' listener (a shared function, not a
 * closure) per request; the refusals are built once, when their reason changes.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { GatewayError, envelopeJson, errorHeaders } from '../errors/index.js';
import { newRequestId } from './request-id.js';
import { ArrivedMessage } from './request-timing.js';
import { CONFORMANCE_SERVER_OPTIONS, ignoringExpectations, requiringHost } from './http-conformance.js';
import { StalledBodies } from './stalled-bodies.js';
import { answerConnect } from './framework-errors.js';

/** The event-loop monitor's sampling timer (ms); its own period is taken off what it measures. */
const RESOLUTION_MS = 10;
const RETRY_AFTER_SECONDS = 1;

export interface LoadShedderOptions {
  maxInFlight: number;
  maxEventLoopDelayMs: number;
  logger: Logger;
  /** How often the event-loop delay is read and the monitor reset (default 1000 ms). */
  sampleEveryMs?: number;
  /** How long a request body may send nothing before it is ended with 408 (default 30 s; see stalled-bodies.ts). */
  bodyIdleTimeoutMs?: number;
}

/** What Fastify's `serverFactory` option takes. */
export type ServerFactory = (handler: RequestListener, options: Record<string, unknown>) => Server;

/** A 503 ready to write: the envelope and its headers, X-Request-Id added per response. */
interface Refusal {
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

function refusalOf(error: GatewayError, extra: Record<string, string> = {}): Refusal {
  const body = envelopeJson(error);
  return { body, headers: { ...errorHeaders(error), ...extra, 'content-length': String(Buffer.byteLength(body)) } };
}

/** The probes, which must always answer; the first character rules out every other path cheaply. */
export function isProbe(url: string | undefined): boolean {
  if (url === undefined) return false;
  const c = url.charCodeAt(1);
  if (c !== 104 /* h */ && c !== 114 /* r */ && c !== 109 /* m */) return false;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path === '/healthz' || path === '/readyz' || path === '/metrics';
}

export class LoadShedder {
  /** Told of every refused request, for metrics. */
  onShed: (reason: 'in_flight_cap' | 'event_loop_delay' | 'draining') => void = () => undefined;
  private inFlightCount = 0;
  private overloaded = false;
  private drainingNow = false;
  /** overloaded or draining: the one flag the hot path reads besides the counter. */
  private refusing = false;
  private readonly maxInFlight: number;
  private readonly maxDelayMs: number;
  private readonly logger: Logger;
  private readonly servers: Server[] = [];
  private readonly histogram: IntervalHistogram;
  private readonly timer: NodeJS.Timeout;
  private readonly capRefusal: Refusal;
  private readonly drainRefusal: Refusal;
  private delayRefusal: Refusal;
  /** Requests refused since the last sample, by reason, for one log line a second at most. */
  private shedForCap = 0;
  private shedForDelay = 0;
  private closeIdleScheduled = false;
  private idleWaiter: (() => void) | null = null;
  private readonly stalledBodies: StalledBodies;

  constructor(options: LoadShedderOptions) {
    this.maxInFlight = options.maxInFlight;
    this.maxDelayMs = options.maxEventLoopDelayMs;
    this.logger = options.logger;
    this.capRefusal = refusalOf(
      new GatewayError('gateway_overloaded', `Too many requests in flight on this gateway instance (its limit is ${this.maxInFlight}); retry shortly.`, { retryAfterSeconds: RETRY_AFTER_SECONDS }),
    );
    this.drainRefusal = refusalOf(new GatewayError('shutting_down', undefined, { retryAfterSeconds: RETRY_AFTER_SECONDS }), { connection: 'close' });
    this.delayRefusal = this.delayRefusalFor(this.maxDelayMs);
    this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.histogram.enable();
    this.timer = setInterval(() => this.sample(), options.sampleEveryMs ?? 1_000);
    this.timer.unref();
    this.stalledBodies = new StalledBodies(options.bodyIdleTimeoutMs ?? 30_000);
  }

  /** Requests being handled now (probes left out). */
  get inFlight(): number {
    return this.inFlightCount;
  }

  get draining(): boolean {
    return this.drainingNow;
  }

  /** For Fastify's `serverFactory`: a node:http server whose listener sheds load before Fastify runs. */
  readonly serverFactory: ServerFactory = (handler, options) => {
    const listener = requiringHost(this.listener(handler));
    const server = createServer({ ...CONFORMANCE_SERVER_OPTIONS, IncomingMessage: ArrivedMessage }, listener);
    ignoringExpectations(server, listener);
    // Without a listener Node drops a CONNECT without a word; it gets its enveloped 400 instead.
    server.on('connect', answerConnect);
    // What Fastify applies to the servers it makes itself, and not to a factory's.
    if (typeof options.keepAliveTimeout === 'number') server.keepAliveTimeout = options.keepAliveTimeout;
    if (typeof options.requestTimeout === 'number') server.requestTimeout = options.requestTimeout;
    if (typeof options.connectionTimeout === 'number') server.setTimeout(options.connectionTimeout);
    if (typeof options.maxRequestsPerSocket === 'number' && options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    this.stalledBodies.watch(server);
    this.servers.push(server);
    return server;
  };

  /** Wraps a request listener: refused requests never reach it. */
  listener(handler: RequestListener): RequestListener {
    return (req, res) => {
      if (isProbe(req.url)) return handler(req, res);
      if (this.refusing || this.inFlightCount >= this.maxInFlight) return this.refuse(req, res);
      this.inFlightCount++;
      if (res.socket === null) {
        // Pipelined behind another answer: if the connection dies first, this one never emits 'close'.
        const socket = req.socket;
        let held = true;
        const release = (): void => {
          if (!held) return;
          held = false;
          socket.removeListener('close', release);
          this.onResponseClose();
        };
        res.on('close', release);
        socket.once('close', release);
      } else {
        res.on('close', this.onResponseClose);
      }
      handler(req, res);
    };
  }

  /**
   * Takes one more in-flight slot, for work that outlives its response: a request under an
   * Idempotency-Key runs on when its caller leaves, and still occupies the instance. Returns the
   * call that gives the slot back (once, however often it is called).
   */
  hold(): () => void {
    this.inFlightCount++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.onResponseClose();
    };
  }

  private readonly onResponseClose = (): void => {
    this.inFlightCount--;
    if (!this.drainingNow) return;
    // The connection that carried it is idle now: close it rather than keep it alive for nothing.
    if (!this.closeIdleScheduled) {
      this.closeIdleScheduled = true;
      setImmediate(this.closeIdle);
    }
    if (this.inFlightCount === 0 && this.idleWaiter !== null) this.idleWaiter();
  };

  private readonly closeIdle = (): void => {
    this.closeIdleScheduled = false;
    for (const server of this.servers) server.closeIdleConnections();
  };

  private refuse(req: IncomingMessage, res: ServerResponse): void {
    let refusal: Refusal;
    if (this.drainingNow) {
      refusal = this.drainRefusal;
      this.onShed('draining');
    } else if (this.overloaded) {
      refusal = this.delayRefusal;
      this.shedForDelay++;
      this.onShed('event_loop_delay');
    } else {
      refusal = this.capRefusal;
      this.shedForCap++;
      this.onShed('in_flight_cap');
    }
    // The body is discarded unread, so that the connection can carry the next request.
    req.resume();
    res.writeHead(503, { 'x-request-id': newRequestId(), ...refusal.headers });
    res.end(refusal.body);
  }

  private delayRefusalFor(delayMs: number): Refusal {
    return refusalOf(
      new GatewayError('gateway_overloaded', `This gateway instance is overloaded: its event-loop delay reached ${delayMs} ms, above the threshold of ${this.maxDelayMs} ms; retry shortly.`, {
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      }),
    );
  }

  /** Once a second: the longest event-loop delay since the last sample decides the next second. */
  private sample(): void {
    const delayMs = Math.max(0, Math.round(this.histogram.max / 1e6 - RESOLUTION_MS));
    this.histogram.reset();
    const over = delayMs > this.maxDelayMs;
    if (over) this.delayRefusal = this.delayRefusalFor(delayMs);
    if (over && !this.overloaded) this.logger.warn({ event_loop_delay_ms: delayMs, threshold_ms: this.maxDelayMs }, 'event-loop delay above the threshold; shedding new requests');
    if (!over && this.overloaded) this.logger.info({ event_loop_delay_ms: delayMs, threshold_ms: this.maxDelayMs }, 'event-loop delay back under the threshold; serving again');
    this.overloaded = over;
    this.refusing = over || this.drainingNow;
    if (this.shedForCap > 0 || this.shedForDelay > 0) {
      this.logger.warn({ in_flight_cap: this.shedForCap, event_loop_delay: this.shedForDelay, max_in_flight: this.maxInFlight }, 'shed requests with 503 gateway_overloaded in the last interval');
      this.shedForCap = 0;
      this.shedForDelay = 0;
    }
  }

  /** From now on every new request (probes aside) is answered 503 `shutting_down` with `Connection: close`. */
  beginDrain(): void {
    this.drainingNow = true;
    this.refusing = true;
    this.closeIdle();
  }

  /** Resolves when no counted request is in flight any more (at once if none is). */
  idle(): Promise<void> {
    if (this.inFlightCount === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.idleWaiter = () => {
        this.idleWaiter = null;
        resolve();
      };
    });
  }

  /** Destroys every connection, in flight or not: the end of a drain whose deadline passed. */
  closeAllConnections(): void {
    for (const server of this.servers) server.closeAllConnections();
  }

  /** Stops the event-loop monitor. */
  stop(): void {
    clearInterval(this.timer);
    this.stalledBodies.stop();
    this.histogram.disable();
  }
}
