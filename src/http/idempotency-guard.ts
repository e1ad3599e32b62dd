/**
 * The HTTP side of Idempotency-Key for a POST under /v1: parse the header, then either let the
 * request run under its claim, or answer it here with the recorded response (a replay), or throw
 * the 400/409/503. A replay is counted against requests per minute, nothing else, and says what
 * it is: `Idempotent-Replayed: true` and the original request's id in `X-Original-Request-Id`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import { toGatewayError } from '../errors/index.js';
import { assertModelAllowed } from '../auth/authenticator.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import type { IdempotentCall } from '../idempotency/idempotent-call.js';
import { IDEMPOTENCY_HEADER, parseIdempotencyKey } from '../idempotency/idempotency-key.js';
import { requestFingerprint } from '../idempotency/fingerprint.js';
import { replayPlan, type LimitPlans } from '../limits/plan.js';
import type { RateLimiter } from '../limits/types.js';
import type { Modality } from '../protocol/modalities.js';
import type { IdempotencyRecord } from '../storage/types.js';

export const REPLAYED_HEADER = 'idempotent-replayed';
export const ORIGINAL_REQUEST_HEADER = 'x-original-request-id';

export interface IdempotencyGuardDeps {
  readonly idempotency: Idempotency;
  readonly limiter: RateLimiter;
  readonly plans: LimitPlans;
}

/** Returned when the guard answered the request itself. */
export const REPLAYED = Symbol('replayed');

/**
 * The claim to run under (the caller must `finish` it on every path), null when no key was sent,
 * or REPLAYED once the recorded response has been sent.
 */
export async function guardIdempotent(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: IdempotencyGuardDeps,
  /** The replay is counted against this modality's requests per minute; null for endpoints without limits. */
  modality: Modality | null,
  /** What identifies the request: the body, or for a form its fields and its files' digests. */
  fingerprintBody: unknown = request.body,
  beforeReplay?: (record: IdempotencyRecord) => Promise<void>,
): Promise<IdempotentCall | null | typeof REPLAYED> {
  const key = parseIdempotencyKey(request.headers[IDEMPOTENCY_HEADER]);
  if (key === undefined) return null;
  const principal = request.principal as Principal;
  const path = request.url.split('?', 1)[0] ?? request.url;
  const fingerprint = requestFingerprint(request.method, path, fingerprintBody);
  const start = await deps.idempotency.start(principal.account.id, key, fingerprint, request.id);
  if (start.kind === 'execute') return start.call;
  await beforeReplay?.(start.record);
  await replay(request, reply, deps, modality, start.record);
  return REPLAYED;
}

async function replay(request: FastifyRequest, reply: FastifyReply, deps: IdempotencyGuardDeps, modality: Modality | null, record: IdempotencyRecord): Promise<void> {
  const principal = request.principal as Principal;
  const body = request.body as { model?: unknown } | null;
  const model = typeof body?.model === 'string' ? body.model : '';
  // Another key of the account may have made the record: this key's model scope still applies.
  if (model !== '') assertModelAllowed(principal, model);
  const plan = modality === null ? null : replayPlan(deps.plans.planFor(principal.tier.name, model, modality));
  let limitHeaders: Readonly<Record<string, string>> = {};
  if (plan !== null && (plan.requestsPerMinute !== null || plan.tokensPerMinute !== null)) {
    const admission = await deps.limiter.admit({ keyId: principal.key.id, requestId: request.id, plan, tokens: 0 });
    admission.settle({ tokens: 0, failed: false });
    limitHeaders = admission.headers;
  }
  reply
    .code(record.status)
    .headers({ ...replayedHeaders(record), ...limitHeaders, 'x-request-id': request.id, [REPLAYED_HEADER]: 'true', [ORIGINAL_REQUEST_HEADER]: record.requestId })
    .send(record.body);
}

/**
 * The recorded headers, except that a replayed error is not worth retrying: a retry with the same
 * key can only get the same answer again (a new key runs the request anew).
 */
function replayedHeaders(record: IdempotencyRecord): Record<string, string> {
  if (record.status < 400) return record.headers;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(record.headers)) if (name !== 'retry-after' && name !== 'retry-after-ms') headers[name] = value;
  headers['x-should-retry'] = 'false';
  return headers;
}

/** A JSON answer of an endpoint that charges nothing. */
export interface PlainAnswer {
  readonly status: number;
  readonly body: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Runs a POST that charges nothing (an upload, a cancel) under the request's Idempotency-Key, if
 * it has one: the outcome, success or refusal, is recorded by the rule every keyed request follows
 * and committed on its own, before it is answered. Returns the answer to send, or REPLAYED once the
 * recorded one was sent.
 */
export async function runIdempotent(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: IdempotencyGuardDeps,
  fingerprintBody: unknown,
  run: () => Promise<PlainAnswer>,
): Promise<PlainAnswer | typeof REPLAYED> {
  if (request.headers[IDEMPOTENCY_HEADER] === undefined) return run();
  const call = await guardIdempotent(request, reply, deps, null, fingerprintBody);
  if (call === REPLAYED || call === null) return call === null ? run() : REPLAYED;
  try {
    let answer: PlainAnswer;
    try {
      answer = await run();
    } catch (err) {
      await deps.idempotency.commit(call.recordError(toGatewayError(err)));
      throw err;
    }
    await deps.idempotency.commit(call.recordFor(answer.status, { 'content-type': JSON_TYPE }, answer.body));
    return answer;
  } finally {
    await call.finish();
  }
}
