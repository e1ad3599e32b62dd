/**
 * The models callers can name, from the configuration, and the public record of each. Routes and
 * providers stay private: a caller sees what a model can do, never where it is served from.
 */
import type { ModelConfig } from '../config/schema.js';
import type { Capability } from '../protocol/capabilities.js';
import type { ModelTokenFacts } from '../protocol/token-bound.js';

export interface CatalogModel {
  readonly id: string;
  readonly config: ModelConfig;
  readonly capabilities: ReadonlySet<Capability>;
  readonly created: number;
  readonly tokenFacts: ModelTokenFacts;
}

export interface ModelRecord {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  capabilities: Capability[];
  context_window: number;
  max_output_tokens: number;
  pricing: ModelConfig['price'];
  [extra: string]: unknown;
}

export class ModelCatalog {
  private readonly byId = new Map<string, CatalogModel>();

  constructor(models: readonly ModelConfig[], defaultCreated: number) {
    for (const config of models) {
      this.byId.set(config.id, {
        id: config.id,
        config,
        capabilities: new Set(config.capabilities),
        created: config.created ?? defaultCreated,
        tokenFacts: { contextWindow: config.context_window, maxOutputTokens: config.max_output_tokens, tokensPerImage: config.tokens_per_image },
      });
    }
  }

  get(id: string): CatalogModel | undefined {
    return this.byId.get(id);
  }

  all(): IterableIterator<CatalogModel> {
    return this.byId.values();
  }
}

export function modelRecord(model: CatalogModel): ModelRecord {
  const { config } = model;
  return {
    id: model.id,
    object: 'model',
    created: model.created,
    owned_by: config.owned_by,
    capabilities: [...config.capabilities],
    context_window: config.context_window,
    max_output_tokens: config.max_output_tokens,
    pricing: config.price,
  };
}
