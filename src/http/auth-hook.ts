/**
 * The preHandler that admits a /v1 request: authenticate the key, then check the SDK and the
 * endpoint against the tier and the key's scope. Endpoint names are the path after /v1 with
 * parameters left as written in the route (e.g. `chat/completions`, `models`).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Authenticator, assertEndpointAllowed, assertSdkAllowed } from '../auth/authenticator.js';
import { detectSdk } from '../auth/sdk.js';

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function authHook(authenticator: Authenticator) {
  return async function admit(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const principal = await authenticator.authenticate(header(request, 'authorization'));
    request.principal = principal;
    request.sdk = detectSdk(header(request, 'user-agent'), header(request, 'x-stainless-lang'));
    assertSdkAllowed(principal, request.sdk);
    const endpoint = (request.routeOptions.config as { endpoint?: string }).endpoint;
    if (endpoint !== undefined) assertEndpointAllowed(principal, endpoint);
  };
}
