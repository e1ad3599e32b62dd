/**
 * Errors raised by Fastify itself (body parsing, size limits, bad URLs) and by Node's HTTP parser,
 * mapped to the catalogue so that nothing ever answers in the framework's own shape.
 */
import type { Socket } from 'node:net';
import { GatewayError, envelopeJson, errorHeaders, toGatewayError } from '../errors/index.js';
import { newRequestId } from './request-id.js';

interface FrameworkError {
  code?: string;
  statusCode?: number;
  message?: string;
}

export function fromFrameworkError(err: unknown, bodyLimit: number): GatewayError {
  if (err instanceof GatewayError) return err;
  const { code, statusCode } = (err ?? {}) as FrameworkError;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('request_too_large', `The request body is over the limit of ${bodyLimit} bytes.`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new GatewayError('unsupported_content_type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('invalid_json', 'The request body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new GatewayError('invalid_json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('bad_http_request', 'The Content-Length header does not match the body.');
    case 'FST_ERR_BAD_URL':
      return new GatewayError('bad_http_request', 'The request URL is not valid.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      // A well-formed URL naming an id longer than any Tollgate makes: nothing has it.
      return new GatewayError('route_not_found', 'Nothing has this id: an id in the path is longer than 512 characters.');
    default:
      break;
  }
  // Body parsers signal a bad JSON body with a SyntaxError carrying status 400.
  if (err instanceof SyntaxError && statusCode === 400) return new GatewayError('invalid_json', `The request body is not valid JSON: ${err.message}`);
  if (code === 'FST_ERR_CTP_INVALID_PARSE_TYPE' || (statusCode === 400 && code?.startsWith('FST_'))) return new GatewayError('bad_http_request');
  return toGatewayError(err);
}

/** Node's HTTP parser rejected the bytes before any request existed: answer on the raw socket. */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const message =
    err.code === 'HPE_HEADER_OVERFLOW' ? 'The request headers are too large.' :
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'The request was not received in time.' :
    undefined;
  answerOnSocket(socket, new GatewayError('bad_http_request', message));
}

/** A CONNECT request (Node hands it over as a bare socket): refused, as a proxy request the gateway does not serve. */
export function answerConnect(_req: unknown, socket: Socket): void {
  answerOnSocket(socket, new GatewayError('bad_http_request', 'CONNECT is not supported: this is an API gateway, not a proxy.'));
}

/** Writes a 400 in the envelope straight to the socket, then closes it. */
function answerOnSocket(socket: Socket, error: GatewayError): void {
  const body = envelopeJson(error);
  const headers = { 'x-request-id': newRequestId(), 'content-length': String(Buffer.byteLength(body)), connection: 'close', ...errorHeaders(error) };
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  if (socket.writable) socket.write(`HTTP/1.1 400 Bad Request\r\n${head}\r\n${body}`);
  socket.destroy();
}
