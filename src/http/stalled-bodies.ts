/**
 * Request bodies that stop arriving (`server.body_idle_timeout_ms`). Node's request timeout is
 * off (a large upload on a slow link may rightly take long), so without this a client that sent
 * its headers and then nothing of its JSON body, or stopped halfway, held its connection and one
 * of the instance's `max_in_flight` slots for as long as it kept the connection open: a few
 * thousand such clients, buggy or hostile, and every other caller is refused 503.
 *
 * Nothing per request: one sweep a second (a quarter of the timeout when that is shorter) over
 * the open connections compares each connection's byte count with the last sweep's while the
 * request its parser is receiving (Node's own record of it, `socket.parser.incoming`: right for
 * pipelined requests and the probe paths too, and no store on the hot path) is incomplete. Only
 * the client's silence counts: bytes that arrived and wait for the gateway to read them (a key
 * looked up in the store first), a connection Node paused (answers queued behind a slow one), or
 * bytes that waited in the kernel while the event loop was blocked mean the wait is the gateway's. Multipart bodies are left to their own reader (multipart-form.ts), which
 * applies the same timeout and also discards what the upload stored.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError } from '../errors/index.js';
import { isDiscarding } from './discard-body.js';

const MAX_SWEEP_EVERY_MS = 1_000;

/** Node's HTTP server keeps the connection's parser on the socket (internal, stable since Node 0.x; absent: nothing is swept). */
type Connection = Socket & { parser?: { incoming?: IncomingMessage | null } | null };

interface Quiet {
  readonly req: IncomingMessage;
  readonly bytesRead: number;
  readonly since: number;
}

export class StalledBodies {
  private readonly connections = new Set<Connection>();
  /** Connections whose request body was incomplete at the last sweep, with what they had read then. */
  private readonly quiet = new Map<Connection, Quiet>();
  private readonly timer: NodeJS.Timeout;
  /** Requests already failed with the 408: left to close after their answer, never destroyed on top. */
  private readonly failed = new WeakSet<IncomingMessage>();

  constructor(private readonly idleMs: number) {
    this.timer = setInterval(() => this.sweep(), Math.max(1, Math.min(MAX_SWEEP_EVERY_MS, Math.floor(idleMs / 4))));
    this.timer.unref();
  }

  /** Watches the connections of `server`. */
  watch(server: Server): void {
    server.on('connection', (socket: Connection) => {
      this.connections.add(socket);
      socket.once('close', () => {
        this.connections.delete(socket);
        this.quiet.delete(socket);
      });
    });
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sweep(): void {
    const now = performance.now();
    for (const socket of this.connections) {
      const req = socket.parser?.incoming ?? undefined;
      if (req === undefined || req.complete || req.destroyed || this.failed.has(req) || isMultipart(req)) {
        this.quiet.delete(socket);
        continue;
      }
      const seen = this.quiet.get(socket);
      if (seen === undefined || seen.req !== req || seen.bytesRead !== socket.bytesRead || req.readableLength > 0 || socket.isPaused()) {
        this.quiet.set(socket, { req, bytesRead: socket.bytesRead, since: now });
        continue;
      }
      if (now - seen.since < this.idleMs) continue;
      // Judged after the poll phase: bytes that waited in the kernel while the loop was blocked count.
      setImmediate(() => {
        if (this.quiet.get(socket) !== seen || socket.bytesRead !== seen.bytesRead || req.complete || req.destroyed || req.readableLength > 0) return;
        this.quiet.delete(socket);
        try {
          this.end(req);
        } catch (err) {
          // A listener of the request threw: that request is lost, not the process or the sweep.
          req.destroy(err instanceof Error ? err : undefined);
        }
      });
    }
  }

  /**
   * Fails the body's reader with the 408, which the error handler answers (and closes the
   * connection, the body being incomplete); with no reader yet, the connection is closed.
   */
  private end(req: IncomingMessage): void {
    if (isDiscarding(req)) {
      // Answered already (its rest was being thrown away): only the connection is left to close.
      req.socket?.destroy();
    } else if (req.listenerCount('data') > 0 && req.listenerCount('error') > 0) {
      this.failed.add(req);
      req.emit('error', new GatewayError('request_body_timeout', `No byte of the request body arrived for ${this.idleMs} ms.`));
    } else {
      req.destroy();
    }
  }
}

function isMultipart(req: IncomingMessage): boolean {
  return req.headers['content-type']?.trimStart().toLowerCase().startsWith('multipart/') === true;
}
