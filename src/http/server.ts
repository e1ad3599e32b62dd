/**
 * The HTTP server: Fastify with every framework error, unknown route and fault turned into the
 * spec's envelope, an X-Request-Id on every response, and the /v1 routes behind authentication.
 * Routes are thin: they call the core and relay its answer.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { AccessLogWriter } from '../logging/logger.js';
import { GatewayError } from '../errors/index.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { ModelCatalog } from '../catalog/model-catalog.js';
import type { ChatService } from '../core/chat-service.js';
import type { ModelLimits } from '../core/model-limits.js';
import { auditOf } from './request-state.js';
import { authHook } from './auth-hook.js';
import { answerClientError, fromFrameworkError } from './framework-errors.js';
import { KnownRoutes } from './known-routes.js';
import { newRequestId } from './request-id.js';
import { sendError } from './send-error.js';
import { accessLogFor } from './access-log.js';
import { chatRoutes } from './routes/chat.js';
import { modelRoutes } from './routes/models.js';
import { healthRoutes } from './routes/health.js';
// --- admin API (issue 5) ---
import { ADMIN_PREFIX, adminPlugin, type AdminDeps } from '../admin/admin-plugin.js';
// --- end admin API ---

export interface HttpServerDeps {
  logger: Logger;
  /** One line per request, or null when request logging is off. */
  accessLog: AccessLogWriter | null;
  bodyLimit: number;
  authenticator: Authenticator;
  catalog: ModelCatalog;
  chat: ChatService;
  limits: ModelLimits;
  // --- admin API (issue 5) ---
  /** The admin API under /admin/v1 (store, key cache, credit gate, tier names, admin token); left out: no admin routes. */
  admin?: AdminDeps;
  // --- end admin API ---
}

/**
 * Plain JSON.parse instead of Fastify's prototype-poisoning scan (secure-json-parse), which costs
 * more than the parse itself: nothing in Tollgate merges a body into another object, and a
 * `__proto__` key that JSON.parse makes is an ordinary own property, inert in validation and
 * relayed upstream as data.
 */
function parseJsonBody(request: FastifyRequest, body: string | Buffer, done: (err: Error | null, value?: unknown) => void): void {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (text.length === 0) return done(new GatewayError('invalid_json', 'The request body is empty; send a JSON object.'));
  const declared = request.headers['content-length'];
  request.bodyBytes = declared === undefined ? Buffer.byteLength(text) : Number(declared);
  try {
    done(null, JSON.parse(text));
  } catch (err) {
    done(new GatewayError('invalid_json', `The request body is not valid JSON: ${(err as Error).message}`));
  }
}

export function buildHttpServer(deps: HttpServerDeps): FastifyInstance {
  const { logger, bodyLimit } = deps;
  const accessLog = accessLogFor(deps.accessLog);
  const app = Fastify({
    logger: false,
    bodyLimit,
    genReqId: newRequestId,
    requestIdHeader: false,
    return503OnClosing: false,
    // Admin paths carry account ids of up to 128 characters, URL-encoded (the default limit is 100).
    routerOptions: { maxParamLength: 512 },
    forceCloseConnections: true,
    clientErrorHandler: answerClientError,
    frameworkErrors: (err, request, reply) => {
      const error = fromFrameworkError(err, bodyLimit);
      void sendError(reply, error);
      accessLog(reply, error.status);
    },
  });

  // The API takes JSON only; Fastify would otherwise hand a text/plain body to the routes as a string.
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);

  const known = new KnownRoutes();
  app.addHook('onRoute', (route) => known.add(route.url, route.method));

  app.decorateRequest('principal', null);
  app.decorateRequest('sdk', 'unknown');
  // No onRequest hook: running one costs more per request than what it would do. Every place
  // that sends a response sets X-Request-Id itself (sendError, the routes, the stream writer).
  app.decorateRequest('audit', null);
  app.decorateRequest('bodyBytes', 0);


  app.setErrorHandler((err, request, reply) => {
    const error = fromFrameworkError(err, bodyLimit);
    if (error.status === 500) logger.error({ err, request_id: request.id }, 'unexpected fault');
    auditOf(request).errorCode = error.code;
    sendError(reply, error);
    accessLog(reply, error.status);
    return reply;
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    const methods = known.methodsFor(path);
    if (methods.length > 0) reply.header('allow', methods.join(', '));
    const message =
      methods.length > 0
        ? `${request.method} is not supported on ${path}; it accepts ${methods.join(', ')}.`
        : `There is no route ${request.method} ${path}.${path.startsWith('/v1/') || path.startsWith(`${ADMIN_PREFIX}/`) ? '' : ' The API lives under /v1.'}`;
    sendError(reply, new GatewayError('route_not_found', message));
    accessLog(reply, 404);
    return reply;
  });

  healthRoutes(app);
  app.register(
    (v1, _opts, done) => {
      v1.addHook('preHandler', authHook(deps.authenticator));
      modelRoutes(v1, deps.catalog, deps.limits, accessLog);
      chatRoutes(v1, deps.chat, logger, accessLog);
      done();
    },
    { prefix: '/v1' },
  );
  // --- admin API (issue 5) ---
  if (deps.admin) app.register(adminPlugin(deps.admin, accessLog), { prefix: ADMIN_PREFIX });
  // --- end admin API ---
  return app;
}
