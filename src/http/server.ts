/**
 * The HTTP server: Fastify with every framework error, unknown route and fault turned into the
 * spec's envelope, an X-Request-Id on every response, and the /v1 routes behind authentication.
 * Routes are thin: they call the core and relay its answer. In front of Fastify, on the node:http
 * server itself, the load shedder refuses what this instance should not start (see load-shedder.ts).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { AccessLogWriter } from '../logging/logger.js';
import { GatewayError } from '../errors/index.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import type { ModelCatalog } from '../catalog/model-catalog.js';
import type { ChatService } from '../core/chat-service.js';
import type { ModelLimits } from '../core/model-limits.js';
import { auditOf } from './request-state.js';
import { authHook } from './auth-hook.js';
import { answerClientError, fromFrameworkError } from './framework-errors.js';
import { KnownRoutes } from './known-routes.js';
import { newRequestId } from './request-id.js';
import { tierLimitHeaders } from './tier-limit-headers.js';
import { sendError } from './send-error.js';
import { parseJsonBody } from './json-body.js';
import { discardRestOfBody } from './discard-body.js';
import { accessLogFor } from './access-log.js';
import { chatRoutes } from './routes/chat.js';
import { responseRoutes } from './routes/responses.js';
import type { StoredResponses } from '../responses/stored-responses.js';
import { unaryRoutes } from './routes/unary.js';
import type { UnaryService } from '../core/unary-service.js';
import { embeddingsOperation } from '../core/operations/embeddings.js';
import { imagesOperation } from '../core/operations/images.js';
import { assetRoutes } from './routes/assets.js';
import type { Assets } from '../assets/assets.js';
import fastifyMultipart from '@fastify/multipart';
import { speechOperation } from '../core/operations/speech.js';
import { transcriptionOperation } from '../core/operations/transcription.js';
import { imageEditOperation } from '../core/operations/image-edits.js';
import { videosOperation } from '../core/operations/videos.js';
import { fileRoutes } from './routes/files.js';
import { videoRoutes } from './routes/videos.js';
import type { Files } from '../uploads/files.js';
import type { VideoJobs } from '../videos/video-jobs.js';
import type { UnaryRouteDeps } from './routes/unary.js';
import { modelRoutes } from './routes/models.js';
import { healthRoutes } from './routes/health.js';
import { metricsRoutes } from './routes/metrics.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { LoadShedder } from './load-shedder.js';
import type { InFlightWork } from './in-flight-work.js';
import type { Readiness } from './readiness.js';
import type { IdempotencyGuardDeps } from './idempotency-guard.js';
import { ADMIN_PREFIX, adminPlugin, type AdminDeps } from '../admin/admin-plugin.js';
import { isEndpointName } from '../auth/endpoint-names.js';

export interface HttpServerDeps {
  logger: Logger;
  /** One line per request, or null when request logging is off. */
  accessLog: AccessLogWriter | null;
  bodyLimit: number;
  authenticator: Authenticator;
  catalog: ModelCatalog;
  chat: ChatService;
  /** Responses API responses kept for later references to their items. */
  responses: StoredResponses;
  /** Every POST answered in one piece outside chat (embeddings, images). */
  unary: UnaryService;
  /** Generated files served under /v1/assets. */
  assets: Assets;
  /** Uploads under /v1/files. */
  files: Files;
  /** Video jobs under /v1/videos. */
  videos: VideoJobs;
  /** Where form files go while a request uses them, the upload limit, the content types allowed. */
  uploads: UnaryRouteDeps['uploads'];
  /** How long assets are kept (a finished video's `expires_at`). */
  assetRetentionMs: number;
  /** `server.public_url`: the base of asset links, when the Host a caller sends is not the one to link to. */
  publicUrl: string | undefined;
  limits: ModelLimits;
  /** Refuses requests before Fastify sees them: over the in-flight cap, a lagging event loop, draining. */
  shedder: LoadShedder;
  /** Counts the chat handlers still running, for a drain to wait on. */
  work: InFlightWork;
  readiness: Readiness;
  /** Prometheus metrics at GET /metrics, or null when `metrics.enabled` is false. */
  metrics: GatewayMetrics | null;
  /** Idempotency-Key handling for POSTs under /v1. */
  idempotency: IdempotencyGuardDeps;
  /** The admin API under /admin/v1 (store, key cache, credit gate, tier names, admin token); left out: no admin routes. */
  admin?: AdminDeps;
}

export function buildHttpServer(deps: HttpServerDeps): FastifyInstance {
  const { logger, bodyLimit } = deps;
  const accessLog = accessLogFor(deps.accessLog, deps.metrics);
  const app = Fastify({
    logger: false,
    bodyLimit,
    genReqId: newRequestId,
    requestIdHeader: false,
    return503OnClosing: false,
    // Admin paths carry account ids of up to 128 characters, URL-encoded (the default limit is 100).
    routerOptions: { maxParamLength: 512 },
    // Requests in flight are drained on close (see drain.ts), not destroyed.
    forceCloseConnections: 'idle',
    serverFactory: deps.shedder.serverFactory,
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
  app.addHook('onRoute', (route) => {
    known.add(route.url, route.method);
    // Tiers and scopes name endpoints from a fixed list; a route outside it could not be granted.
    const endpoint = route.config?.endpoint;
    if (endpoint !== undefined && !isEndpointName(endpoint)) throw new Error(`route ${route.url} has endpoint "${endpoint}", which is not in ENDPOINT_NAMES`);
  });

  app.decorateRequest('principal', null);
  app.decorateRequest('sdk', 'unknown');
  // No onRequest hook: running one costs more per request than what it would do. Every place
  // that sends a response sets X-Request-Id itself (sendError, the routes, the stream writer).
  app.decorateRequest('audit', null);
  app.decorateRequest('bodyBytes', 0);


  app.setErrorHandler((err, request, reply) => {
    const error = fromFrameworkError(err, bodyLimit);
    if (error.status === 500) logger.error({ err, request_id: request.id }, 'unexpected fault');
    else if (error.code === 'store_unavailable') logger.warn({ err: error.cause, request_id: request.id }, 'the store did not answer');
    auditOf(request).errorCode = error.code;
    // Refused before its body was read (over the limit, a wrong key): the rest is read and thrown
    // away so that the client gets this answer (discard-body.ts); a client that stopped sending it
    // has its connection closed.
    if (!request.raw.complete) {
      if (error.code === 'request_body_timeout') {
        reply.header('connection', 'close');
      } else {
        // Fastify asks to close after any body parser error; the rest is read instead.
        reply.removeHeader('connection');
        discardRestOfBody(request.raw);
      }
    }
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

  healthRoutes(app, deps.readiness);
  if (deps.metrics !== null) metricsRoutes(app, deps.metrics, deps.admin?.adminToken);
  app.register(
    (v1, _opts, done) => {
      v1.addHook('preParsing', authHook(deps.authenticator));
      modelRoutes(v1, deps.catalog, deps.limits, accessLog);
      chatRoutes(v1, { chat: deps.chat, logger, accessLog, work: deps.work, idempotency: deps.idempotency, responses: deps.responses });
      const limitHeaders = tierLimitHeaders(deps.limits);
      responseRoutes(v1, deps.responses, accessLog, limitHeaders);
      const unaryDeps: UnaryRouteDeps = { service: deps.unary, logger, accessLog, work: deps.work, idempotency: deps.idempotency, publicUrl: deps.publicUrl, uploads: deps.uploads };
      unaryRoutes(
        v1,
        [
          { path: '/embeddings', operation: embeddingsOperation },
          { path: '/images/generations', operation: imagesOperation(deps.assets) },
          { path: '/audio/speech', operation: speechOperation },
        ],
        unaryDeps,
      );
      // Only these routes parse multipart forms; the others keep refusing anything but JSON.
      v1.register(async (forms) => {
        await forms.register(fastifyMultipart);
        unaryRoutes(
          forms,
          [
            { path: '/audio/transcriptions', operation: transcriptionOperation(deps.files), form: { fileFields: ['file'], formOnly: true } },
            { path: '/audio/translations', operation: transcriptionOperation(deps.files, 'translate'), form: { fileFields: ['file'], formOnly: true } },
            { path: '/images/edits', operation: imageEditOperation(deps.assets, deps.files), form: { fileFields: ['image', 'mask'], formOnly: true } },
            {
              path: '/videos',
              operation: videosOperation(deps.videos, deps.files),
              form: { fileFields: ['input_reference'], formOnly: false },
              beforeReplay: (record) => refuseWhileInFlight(deps.videos, record),
            },
          ],
          unaryDeps,
        );
        fileRoutes(forms, deps.files, deps.uploads.contentTypes, accessLog, deps.idempotency, limitHeaders, deps.work, (request) =>
          deps.limits.admitUpload(request.principal as Principal, request.id),
        );
      });
      videoRoutes(v1, deps.videos, deps.assets, deps.assetRetentionMs, accessLog, deps.idempotency, limitHeaders);
      assetRoutes(v1, deps.assets, accessLog, deps.publicUrl, limitHeaders);
      done();
    },
    { prefix: '/v1' },
  );
  if (deps.admin) app.register(adminPlugin(deps.admin, accessLog), { prefix: ADMIN_PREFIX });
  return app;
}

/**
 * A resend of a video creation with the same Idempotency-Key while the job it made still runs is
 * a 409 naming the job (poll it instead); once the job ended, the creation's answer is replayed.
 */
async function refuseWhileInFlight(videos: VideoJobs, record: { status: number; body: Buffer }): Promise<void> {
  if (record.status !== 200) return;
  let id: unknown;
  try {
    id = (JSON.parse(record.body.toString('utf8')) as { id?: unknown }).id;
  } catch {
    return;
  }
  const job = typeof id === 'string' ? await videos.inFlight(id) : undefined;
  if (job === undefined) return;
  throw new GatewayError('video_job_in_progress', `The video job ${job.id} created with this Idempotency-Key is still ${job.status} (${job.progress}%); poll GET /v1/videos/${job.id}.`, {
    param: 'Idempotency-Key',
    retryAfterSeconds: 5,
  });
}
