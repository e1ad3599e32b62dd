/** Request bodies labelled application/json: parsed once, their size kept, their nesting bounded. */
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/index.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../util/json-depth.js';

/**
 * Plain JSON.parse instead of Fastify's prototype-poisoning scan (secure-json-parse), which costs
 * more than the parse itself: nothing in Tollgate merges a body into another object, and a
 * `__proto__` key that JSON.parse makes is an ordinary own property, inert in validation and
 * relayed upstream as data.
 */
export function parseJsonBody(request: FastifyRequest, body: string | Buffer, done: (err: Error | null, value?: unknown) => void): void {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (text.length === 0) {
    // A DELETE, or a POST such as a video's cancel, has no body to send; some clients still label the nothing as JSON.
    if (request.method !== 'POST' || request.routeOptions.config.takesNoBody === true) return done(null, undefined);
    return done(new GatewayError('invalid_json', 'The request body is empty; send a JSON object.'));
  }
  const declared = request.headers['content-length'];
  request.bodyBytes = declared === undefined ? Buffer.byteLength(text) : Number(declared);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // Looked at only when the parse failed: a compressed body is why, and its bytes say nothing.
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      return done(new GatewayError('invalid_json', `The request body is sent with Content-Encoding: ${encoding.slice(0, 40)}, which Tollgate does not decode; send it uncompressed.`));
    }
    return done(new GatewayError('invalid_json', `The request body is not valid JSON: ${(err as Error).message}`));
  }
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
    return done(new GatewayError('invalid_json', `The request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep.`));
  }
  done(null, value);
}
