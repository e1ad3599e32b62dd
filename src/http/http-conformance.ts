/**
 * The two requests node:http would otherwise answer itself, with a bare status and no body, before
 * any of the gateway's code runs: every answer must be the error envelope with an X-Request-Id.
 *
 * - An HTTP/1.1 request without Host must be refused with 400 (RFC 9112, 3.2): Node is told not to
 *   (`requireHostHeader: false`) and the refusal is written here instead.
 * - An `Expect` other than `100-continue` may be refused with 417 (RFC 9110, 10.1.1); the gateway
 *   ignores the expectation and answers the request as it would without it, as most servers do.
 */
import type { RequestListener, Server, ServerOptions } from 'node:http';
import { GatewayError, envelopeJson, errorHeaders } from '../errors/index.js';
import { newRequestId } from './request-id.js';

export const CONFORMANCE_SERVER_OPTIONS: ServerOptions = { requireHostHeader: false };

const NO_HOST = new GatewayError('bad_http_request', 'An HTTP/1.1 request must carry a Host header.');
const NO_HOST_BODY = envelopeJson(NO_HOST);
const NO_HOST_HEADERS = { ...errorHeaders(NO_HOST), 'content-length': String(Buffer.byteLength(NO_HOST_BODY)), connection: 'close' };

/** Wraps the server's listener: an HTTP/1.1 request without Host gets the enveloped 400. */
export function requiringHost(listener: RequestListener): RequestListener {
  return (req, res) => {
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
      req.resume();
      res.writeHead(400, { 'x-request-id': newRequestId(), ...NO_HOST_HEADERS });
      res.end(NO_HOST_BODY);
      return;
    }
    listener(req, res);
  };
}

/** Answers requests with an unknown expectation as if they had none. */
export function ignoringExpectations(server: Server, listener: RequestListener): void {
  server.on('checkExpectation', listener);
}
