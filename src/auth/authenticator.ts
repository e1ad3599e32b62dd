/**
 * Spec section 5: `Authorization: Bearer <key>`. Missing, malformed, unknown and disabled keys are
 * 401 `authentication_error`, each with its own code; a tier or scope that does not allow the
 * model, endpoint or SDK is 403 `permission_error`.
 */
import { GatewayError } from '../errors/index.js';
import { parseApiKey, secretMatches } from './api-key.js';
import { KeyCache, type CachedKey } from './key-cache.js';
import { compileScope, type CompiledTier, type Principal } from './principal.js';
import type { SdkName } from './sdk.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const MAX_VERIFIED = 100_000;

export class Authenticator {
  /** Principals by cached record: a refreshed cache entry is a new object, so it gets a new principal. */
  private readonly principals = new WeakMap<CachedKey, Principal>();
  /**
   * Keys whose secret was already checked against a cache entry, so that the hash runs once per
   * key and entry rather than once per request. A refreshed entry is a new object and is checked
   * again. Only keys that matched get in, so a flood of wrong keys cannot grow it.
   */
  private readonly verified = new Map<string, CachedKey>();

  constructor(
    private readonly cache: KeyCache,
    private readonly tiers: ReadonlyMap<string, CompiledTier>,
  ) {}

  /**
   * Answers from memory when the key is cached (the hot path, no promise), and with a promise
   * only when the store must be read.
   */
  authenticate(authorization: string | undefined): Principal | Promise<Principal> {
    if (authorization === undefined || authorization.trim() === '') throw new GatewayError('missing_api_key');
    const token = BEARER.exec(authorization)?.[1];
    if (token === undefined) throw new GatewayError('malformed_api_key');
    // A key of another kind (an OpenAI key sent by mistake, say) is a wrong key, as OpenAI calls one.
    const parsed = parseApiKey(token);
    if (parsed === null) throw new GatewayError('invalid_api_key', 'The API key is not a Tollgate key (sk-tg-…).');
    const cached = this.cache.peek(parsed.id, Date.now());
    if (cached !== undefined) return this.admit(token, parsed.secret, cached);
    return this.cache.load(parsed.id).then((found) => this.admit(token, parsed.secret, found));
  }

  private admit(token: string, secret: string, found: CachedKey | null): Principal {
    // The same answer for an unknown id and a wrong secret, so that ids cannot be probed.
    if (found === null) throw new GatewayError('invalid_api_key');
    if (this.verified.get(token) !== found) {
      if (!secretMatches(secret, found.key.secretHash)) throw new GatewayError('invalid_api_key');
      if (this.verified.size >= MAX_VERIFIED) this.verified.clear();
      this.verified.set(token, found);
    }
    if (found.key.status !== 'active') throw new GatewayError('api_key_disabled');
    return this.principalFor(found);
  }

  private principalFor(found: CachedKey): Principal {
    let principal = this.principals.get(found);
    if (principal === undefined) {
      const tier = this.tiers.get(found.account.tier);
      if (tier === undefined) {
        throw new GatewayError('endpoint_not_allowed', `The account's tier "${found.account.tier}" is not configured on this gateway.`);
      }
      principal = { key: found.key, account: found.account, tier, scope: compileScope(found.key) };
      this.principals.set(found, principal);
    }
    return principal;
  }
}

export function assertEndpointAllowed(principal: Principal, endpoint: string): void {
  if (!principal.tier.endpoints.matches(endpoint)) {
    throw new GatewayError('endpoint_not_allowed', `The tier "${principal.tier.name}" may not use the endpoint "${endpoint}".`);
  }
  if (principal.scope.endpoints && !principal.scope.endpoints.matches(endpoint)) {
    throw new GatewayError('endpoint_not_allowed', `This key's scope does not include the endpoint "${endpoint}".`);
  }
}

export function modelAllowed(principal: Principal, modelId: string): boolean {
  return principal.tier.models.matches(modelId) && (principal.scope.models === null || principal.scope.models.matches(modelId));
}

export function assertModelAllowed(principal: Principal, modelId: string): void {
  if (!principal.tier.models.matches(modelId)) {
    throw new GatewayError('model_not_allowed', `The tier "${principal.tier.name}" may not use the model "${modelId}". Use a model listed by GET /v1/models.`, { param: 'model' });
  }
  if (principal.scope.models && !principal.scope.models.matches(modelId)) {
    throw new GatewayError('model_not_allowed', `This key's scope does not include the model "${modelId}". Use a key with the right scope.`, { param: 'model' });
  }
}

export function assertSdkAllowed(principal: Principal, sdk: SdkName): void {
  if (principal.scope.sdks && !principal.scope.sdks.matches(sdk)) {
    throw new GatewayError('sdk_not_allowed', `This key may not be used from the SDK "${sdk}" (allowed: ${principal.scope.sdks.source.join(', ')}).`);
  }
}
