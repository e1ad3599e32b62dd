/**
 * The admin API's credential: `Authorization: Bearer <server.admin_token>`. Both sides are hashed
 * (SHA-256) before the constant-time comparison, so the buffers compared always have the same
 * length and neither the token's length nor its content leaks through timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { GatewayError } from '../errors/index.js';

/**
 * The scheme and the space after it; the token is the rest, trimmed. A pattern that also captured
 * the token up to trailing space (`(.*?)\s*$`) backtracked quadratically over a run of inner
 * spaces: 94 ms for one 16 KiB header, with no token needed to send it.
 */
const BEARER = /^Bearer\s+/i;

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * A check that throws 401 `invalid_admin_token` unless the header carries the token. The presented
 * token is trimmed (HTTP drops whitespace at a header's ends anyway); the configured one is taken
 * as it is, since the configuration refuses a token with whitespace at either end rather than
 * change a secret behind the operator's back.
 */
export function adminTokenCheck(token: string): (authorization: string | undefined) => void {
  const expected = digest(token);
  return (authorization) => {
    if (authorization === undefined || authorization.trim() === '') {
      throw new GatewayError('invalid_admin_token', 'No admin token was sent. Send it as "Authorization: Bearer <server.admin_token>".');
    }
    const scheme = BEARER.exec(authorization);
    const presented = scheme === null ? '' : authorization.slice(scheme[0].length).trim();
    if (presented === '') {
      throw new GatewayError('invalid_admin_token', 'The Authorization header is not of the form "Bearer <admin token>".');
    }
    if (!timingSafeEqual(digest(presented), expected)) throw new GatewayError('invalid_admin_token', 'The admin token is wrong.');
  };
}
