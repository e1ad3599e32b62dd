/** Who is calling: the key, its account and the policies that apply, compiled for fast checks. */
import type { TierConfig } from '../config/schema.js';
import type { AccountRecord, ApiKeyRecord } from '../storage/types.js';
import { GlobList } from '../util/glob.js';

export interface CompiledTier {
  readonly name: string;
  readonly config: TierConfig;
  readonly models: GlobList;
  readonly endpoints: GlobList;
}

export interface CompiledScope {
  readonly models: GlobList | null;
  readonly endpoints: GlobList | null;
  readonly sdks: GlobList | null;
}

export interface Principal {
  readonly key: ApiKeyRecord;
  readonly account: AccountRecord;
  readonly tier: CompiledTier;
  readonly scope: CompiledScope;
}

export function compileTier(name: string, config: TierConfig): CompiledTier {
  return { name, config, models: new GlobList(config.models), endpoints: new GlobList(config.endpoints) };
}

export function compileScope(key: ApiKeyRecord): CompiledScope {
  const scope = key.scope;
  return {
    models: scope?.models ? new GlobList(scope.models) : null,
    endpoints: scope?.endpoints ? new GlobList(scope.endpoints) : null,
    sdks: scope?.sdks ? new GlobList(scope.sdks) : null,
  };
}
