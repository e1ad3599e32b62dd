/**
 * GET and DELETE /v1/responses/{response_id}: a kept Responses API response (src/responses/), read
 * back as it was shown, or forgotten; GET /v1/responses/{response_id}/input_items, what it was
 * generated from. A response of another account, expired, or sent with
 * `store: false` is 404, like one that never existed. POST /v1/responses is in chat.ts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../auth/principal.js';
import { GatewayError } from '../../errors/index.js';
import type { StoredResponses } from '../../responses/stored-responses.js';
import type { AccessLog } from '../access-log.js';
import type { LimitHeadersHook } from '../tier-limit-headers.js';
import { listPageOf } from '../list-query.js';
import { itemsPage } from '../../responses/input-items.js';

interface ResponseParams {
  response_id: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export function responseRoutes(app: FastifyInstance, responses: StoredResponses, accessLog: AccessLog, limitHeaders: LimitHeadersHook): void {
  const options = { config: { endpoint: 'responses' }, preHandler: limitHeaders };

  app.get<{ Params: ResponseParams; Querystring: Record<string, unknown> }>('/responses/:response_id', options, async (request, reply) => {
    const id = request.params.response_id;
    // OpenAI streams a background response's events again; the SDK would wait for events in a JSON answer.
    if (typeof request.query.stream === 'string' && /^(true|1)$/i.test(request.query.stream)) {
      throw new GatewayError('invalid_parameter', 'stream is not supported: a kept response is read back whole (responses are not run in the background here).', { param: 'stream' });
    }
    const response = await responses.get(accountOf(request), id);
    if (response === undefined) throw notFound(id);
    return send(request, reply, response);
  });

  app.get<{ Params: ResponseParams }>('/responses/:response_id/input_items', options, async (request, reply) => {
    const id = request.params.response_id;
    const page = listPageOf(request.query);
    const items = await responses.inputItems(accountOf(request), id);
    if (items === undefined) throw notFound(id);
    return send(request, reply, itemsPage(items, page));
  });

  app.delete<{ Params: ResponseParams }>('/responses/:response_id', options, async (request, reply) => {
    const id = request.params.response_id;
    if (!(await responses.delete(accountOf(request), id))) throw notFound(id);
    return send(request, reply, JSON.stringify({ id, object: 'response', deleted: true }));
  });

  function send(request: FastifyRequest, reply: FastifyReply, body: string): FastifyReply {
    reply.code(200).header('x-request-id', request.id).header('content-type', JSON_TYPE).send(body);
    accessLog(reply, 200);
    return reply;
  }
}

function notFound(id: string): GatewayError {
  return new GatewayError('response_not_found', `Response with id '${id.slice(0, 80)}' not found.`, { param: 'response_id' });
}

function accountOf(request: FastifyRequest): string {
  return (request.principal as Principal).account.id;
}
