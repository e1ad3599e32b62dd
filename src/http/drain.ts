/**
 * Graceful shutdown of the HTTP side: stop accepting connections, close the idle ones, answer any
 * new request on a connection still open with 503 `shutting_down`, let the requests in flight
 * (streams included) finish until the deadline, then destroy what remains and wait for the cut
 * requests' handlers to settle what they delivered.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { LoadShedder } from './load-shedder.js';
import type { InFlightWork } from './in-flight-work.js';
import { GatewayError } from '../errors/index.js';

/** How long the handlers of cut requests get to settle once their connections are gone. */
const SETTLE_GRACE_MS = 5_000;
/** How long streams ended at the deadline get to send their error frame before connections are cut. */
const STREAM_END_GRACE_MS = 1_000;

export interface DrainParts {
  app: FastifyInstance;
  shedder: LoadShedder;
  work: InFlightWork;
  timeoutMs: number;
  logger: Logger;
}

/** Resolves once the server is closed and every handler is done; never rejects for a request cut. */
export async function drainHttp({ app, shedder, work, timeoutMs, logger }: DrainParts): Promise<void> {
  const listening = app.server.listening;
  const started = Date.now();
  shedder.beginDrain();
  if (listening) logger.info({ in_flight: shedder.inFlight, timeout_ms: timeoutMs }, 'draining: no new connections, waiting for the requests in flight');
  // Fastify stops the listener and closes idle connections; it resolves once every connection is gone.
  const closed = app.close();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((resolve) => {
    timer = setTimeout(() => resolve('deadline'), timeoutMs);
  });
  const first = await Promise.race([shedder.idle().then(() => 'idle' as const), closed.then(() => 'closed' as const), deadline]);
  clearTimeout(timer);
  const cut = first === 'deadline' ? shedder.inFlight : 0;
  if (first === 'deadline') {
    // Streams still running end with an error frame (spec 6), not a connection cut without a word.
    const ended = work.cancelStreams(new GatewayError('shutting_down', 'This gateway instance shut down before the stream finished; send the request again.'));
    if (ended > 0) await work.streamsEnded(STREAM_END_GRACE_MS);
  }
  // What is left: at the deadline, the requests cut; otherwise connections with nothing in flight,
  // which Node does not count as idle when they never carried a request (a client's spare
  // connection, a request whose headers are still arriving) and would otherwise keep open.
  shedder.closeAllConnections();
  await closed;
  // Requests whose callers left but which run on to be recorded (Idempotency-Key) have no
  // connection the shedder counts: they get what is left of the deadline, then are cancelled.
  let settled = await work.idle(Math.max(0, timeoutMs - (Date.now() - started)));
  if (!settled) {
    const cancelled = work.cancelTracked(
      new GatewayError('shutting_down', 'This gateway instance shut down before the request finished; resend it, with the same Idempotency-Key, to run it again.'),
    );
    if (cancelled > 0) logger.warn({ cancelled }, 'drain deadline passed: requests running on for an Idempotency-Key were cancelled');
    settled = await work.idle(SETTLE_GRACE_MS);
  }
  if (!settled) logger.warn({ handlers: work.count }, `request handlers still running ${SETTLE_GRACE_MS} ms after the drain; closing anyway`);
  if (listening) {
    logger.info({ cut, ms: Date.now() - started }, cut === 0 ? 'drained: every request in flight finished' : `drain deadline passed: ${cut} requests in flight were cut`);
  }
}
