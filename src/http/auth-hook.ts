/**
 * The hook that admits a /v1 request: authenticate the key, then check the SDK and the endpoint
 * against the tier and the key's scope. Endpoint names are the path after /v1 with parameters left
 * as written in the route (e.g. `chat/completions`, `models`). It runs before the body is read
 * (preParsing): a caller without a valid key gets its 401 or 403, not a 400 or 413 about a body
 * the gateway had no reason to read.
 */
import type { FastifyReply, FastifyRequest, RequestPayload } from 'fastify';
import { Authenticator, assertEndpointAllowed, assertSdkAllowed } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import { detectSdk } from '../auth/sdk.js';

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function admitPrincipal(request: FastifyRequest, principal: Principal): void {
  request.principal = principal;
  request.sdk = detectSdk(header(request, 'user-agent'), header(request, 'x-stainless-lang'));
  assertSdkAllowed(principal, request.sdk);
  const endpoint = (request.routeOptions.config as { endpoint?: string }).endpoint;
  if (endpoint !== undefined) assertEndpointAllowed(principal, endpoint);
}

/** Callback-style so that a cached key admits the request without a promise. */
export function authHook(authenticator: Authenticator) {
  return function admit(request: FastifyRequest, _reply: FastifyReply, _payload: RequestPayload, done: (err?: Error | null) => void): void {
    try {
      const principal = authenticator.authenticate(header(request, 'authorization'));
      if (!(principal instanceof Promise)) {
        admitPrincipal(request, principal);
        return done();
      }
      principal.then(
        (loaded) => {
          try {
            admitPrincipal(request, loaded);
            done();
          } catch (err) {
            done(err as Error);
          }
        },
        (err: unknown) => done(err as Error),
      );
    } catch (err) {
      done(err as Error);
    }
  };
}
