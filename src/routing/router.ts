/**
 * Chooses where a request goes: the first of the model's routes whose adapter implements every
 * capability the request needs. (Failover across routes, weights and health come with routing
 * and resilience; the model's ordered route list already carries what they need.)
 */
import { GatewayError } from '../errors/index.js';
import type { CatalogModel } from '../catalog/model-catalog.js';
import type { Capability } from '../protocol/capabilities.js';
import type { ProviderAdapter } from '../providers/types.js';

export interface ChosenRoute {
  adapter: ProviderAdapter;
  upstreamModel: string;
}

export class Router {
  constructor(private readonly adapters: ReadonlyMap<string, ProviderAdapter>) {}

  pick(model: CatalogModel, needs: readonly { capability: Capability }[]): ChosenRoute {
    let missing: Capability | undefined;
    for (const route of model.config.routes) {
      const adapter = this.adapters.get(route.provider);
      if (adapter === undefined) continue;
      missing = needs.find((need) => !adapter.implements(need.capability, route.model))?.capability;
      if (missing === undefined) return { adapter, upstreamModel: route.model };
    }
    throw new GatewayError(
      'capability_not_implemented',
      `No provider serving the model "${model.id}" implements ${missing ?? 'this request'}. Use a different model for it.`,
    );
  }
}
