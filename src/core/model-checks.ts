/** The checks every request makes against the model it names, whatever the modality. */
import { GatewayError } from '../errors/index.js';
import { assertModelAllowed } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import type { CatalogModel, ModelCatalog } from '../catalog/model-catalog.js';
import type { Requirement } from './required-capabilities.js';

/** The model, if it exists (404) and the caller may use it (403). */
export function modelFor(catalog: ModelCatalog, id: string, principal: Principal): CatalogModel {
  const model = catalog.get(id);
  if (model === undefined) {
    throw new GatewayError('model_not_found', `The model "${id}" does not exist. Check the id against GET /v1/models.`, { param: 'model' });
  }
  assertModelAllowed(principal, model.id);
  return model;
}

/** A capability the model does not have at all is 422, naming it and the field that needs it. */
export function assertModelCapabilities(model: CatalogModel, needs: readonly Requirement[]): void {
  for (const { capability, param } of needs) {
    if (!model.capabilities.has(capability)) {
      throw new GatewayError('model_capability_missing', `The model "${model.id}" does not support ${capability} (needed by ${param}).`, { param });
    }
  }
}
