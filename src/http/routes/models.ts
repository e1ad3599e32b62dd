/** GET /v1/models and GET /v1/models/{model}: only what the caller's tier and key may use. */
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../errors/index.js';
import { assertModelAllowed, modelAllowed } from '../../auth/authenticator.js';
import { modelRecord, type ModelCatalog } from '../../catalog/model-catalog.js';
import type { ModelLimits } from '../../core/model-limits.js';
import type { Principal } from '../../auth/principal.js';
import type { AccessLog } from '../access-log.js';
import { tierHeadersOf } from '../tier-limit-headers.js';
import { withHeaders } from '../../core/call-failure.js';

export function modelRoutes(app: FastifyInstance, catalog: ModelCatalog, limits: ModelLimits, accessLog: AccessLog): void {
  app.get('/models', { config: { endpoint: 'models' } }, async (request, reply) => {
    const principal = request.principal as Principal;
    const data = [];
    for (const model of catalog.all()) if (modelAllowed(principal, model.id)) data.push(modelRecord(model));
    reply.headers(await tierHeadersOf(limits, principal)).header('x-request-id', request.id).send({ object: 'list', data });
    accessLog(reply, 200);
    return reply;
  });

  // A wildcard, not `:model`, because model ids may contain slashes ("meta-llama/Llama-3.1-8B").
  app.get('/models/*', { config: { endpoint: 'models' } }, async (request, reply) => {
    // Already percent-decoded by the router: decoding again would turn "a%2525" into "a%" and throw on "%25E0".
    const id = (request.params as { '*': string })['*'];
    const principal = request.principal as Principal;
    const model = catalog.get(id);
    try {
      if (model === undefined) {
        throw new GatewayError('model_not_found', `The model "${id}" does not exist. Check the id against GET /v1/models.`, { param: 'model' });
      }
      assertModelAllowed(principal, model.id);
    } catch (err) {
      // An error that reached the handler carries the headers too, those of the tier's own pool (no model group is the caller's here).
      throw withHeaders(err, await tierHeadersOf(limits, principal));
    }
    const view = await limits.view(principal, model);
    reply.headers(view.headers).header('x-request-id', request.id).send({ ...modelRecord(model), limits: view.snapshot });
    accessLog(reply, 200);
    return reply;
  });
}
