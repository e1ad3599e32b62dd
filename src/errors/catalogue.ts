/**
 * Every error code Tollgate emits, with its HTTP status and a default message.
 * The README's error table is checked against this list by a test, so a new code must be documented.
 */
import type { ErrorStatus } from './status-table.js';

interface CodeSpec {
  readonly status: ErrorStatus;
  /** Used when the thrower has nothing more specific to say. */
  readonly message: string;
}

export const ERROR_CODES = {
  // 400: the request itself is wrong.
  missing_required_parameter: { status: 400, message: 'A required parameter is missing.' },
  invalid_parameter: { status: 400, message: 'A parameter has the wrong type, format or range.' },
  invalid_json: { status: 400, message: 'The request body is not valid JSON.' },
  unsupported_content_type: { status: 400, message: 'The request body must be sent as application/json.' },
  bad_http_request: { status: 400, message: 'The HTTP request could not be parsed.' },
  upstream_rejected_request: { status: 400, message: 'The upstream provider rejected the request as invalid.' },
  invalid_idempotency_key: { status: 400, message: 'The Idempotency-Key header must be one token or one quoted string of 1 to 255 characters.' },
  previous_response_not_found: { status: 400, message: 'The response named by previous_response_id, or one earlier in its conversation, is not kept: send the whole conversation in input.' },

  // 401: who is calling is unknown.
  missing_api_key: { status: 401, message: 'No API key was sent. Send it as "Authorization: Bearer <key>".' },
  malformed_api_key: { status: 401, message: 'The Authorization header is not of the form "Bearer <key>".' },
  invalid_api_key: { status: 401, message: 'The API key is not known.' },
  api_key_disabled: { status: 401, message: 'The API key has been disabled.' },
  invalid_admin_token: { status: 401, message: 'The admin token is missing or wrong. Send it as "Authorization: Bearer <server.admin_token>".' },

  // 402
  insufficient_quota: { status: 402, message: "The account's credit does not cover this request." },

  // 403: the caller is known but may not do this.
  model_not_allowed: { status: 403, message: 'This key or its tier may not use this model.' },
  endpoint_not_allowed: { status: 403, message: 'This key or its tier may not use this endpoint.' },
  sdk_not_allowed: { status: 403, message: 'This key may not be used from this SDK.' },

  // 404
  model_not_found: { status: 404, message: 'The model does not exist. Check the id against GET /v1/models.' },
  route_not_found: { status: 404, message: 'No such route.' },
  admin_api_disabled: { status: 404, message: 'The admin API is off: the configuration sets no server.admin_token.' },
  account_not_found: { status: 404, message: 'No account has this id.' },
  api_key_not_found: { status: 404, message: 'No API key has this id.' },
  asset_not_found: { status: 404, message: 'No asset has this id.' },
  file_not_found: { status: 404, message: 'No uploaded file has this id.' },
  video_not_found: { status: 404, message: 'No video job has this id.' },
  response_not_found: { status: 404, message: 'No kept response has this id.' },

  // 408
  generation_timeout: { status: 408, message: 'The generation exceeded the time budget for this request.' },
  request_body_timeout: { status: 408, message: 'The request body stopped arriving: nothing of it came for too long, and nothing of it was kept.' },

  // 409
  account_already_exists: { status: 409, message: 'An account with this id already exists.' },
  idempotency_key_in_use: { status: 409, message: 'A request with this Idempotency-Key is still running; retry after Retry-After seconds to get its result.' },
  video_job_in_progress: { status: 409, message: 'The video job is still queued or in progress.' },
  video_job_finished: { status: 409, message: 'The video job has already finished and cannot be cancelled.' },
  idempotency_key_reused: { status: 409, message: 'This Idempotency-Key was already used with a different request; use a new key, or resend the identical request.' },

  // 413
  request_too_large: { status: 413, message: 'The request body is over the size limit.' },
  file_too_large: { status: 413, message: 'An uploaded file is over the upload size limit; nothing of it was kept.' },

  // 416
  range_not_satisfiable: { status: 416, message: 'The Range header asks for bytes past the end of the content.' },

  // 422: valid values that cannot be served together.
  context_length_exceeded: { status: 422, message: "The prompt plus the requested output exceed the model's context window." },
  incompatible_parameters: { status: 422, message: 'The parameters cannot be used together.' },
  model_capability_missing: { status: 422, message: 'The model does not have a capability this request needs.' },

  // 429: one of the four limits of spec section 8 ran out.
  requests_per_minute_exceeded: { status: 429, message: 'The key has reached its requests-per-minute limit.' },
  tokens_per_minute_exceeded: { status: 429, message: 'The key has reached its tokens-per-minute limit.' },
  daily_cap_exceeded: { status: 429, message: 'The key has reached its daily cap for this modality.' },
  too_many_requests_in_flight: { status: 429, message: 'The key has too many requests in flight.' },
  // 429 too, though no wait cures it: the request alone is over the key's tokens per minute.
  request_exceeds_token_limit: { status: 429, message: "The request may use more tokens than the key's tokens-per-minute limit allows at all." },

  // 499: recorded, never sent.
  client_closed_request: { status: 499, message: 'The client closed the connection before the answer.' },

  // 500
  internal_error: { status: 500, message: 'An unexpected fault occurred in the gateway.' },

  // 501
  capability_not_implemented: { status: 501, message: 'No provider adapter for this model implements the requested capability.' },

  // 502: the upstream answered with something we cannot use.
  upstream_error: { status: 502, message: 'The upstream provider failed to serve the request.' },
  upstream_generation_failed: { status: 502, message: 'The model failed to produce a valid answer (a malformed function call); resending may succeed.' },
  upstream_malformed_response: { status: 502, message: 'The upstream provider returned a response that could not be used.' },
  upstream_auth_failed: { status: 502, message: "The gateway's credentials for the upstream provider were refused." },
  upstream_unreachable: { status: 502, message: 'The upstream provider could not be reached.' },
  upstream_stream_truncated: { status: 502, message: 'The upstream provider ended the stream before it was complete.' },

  // 503
  upstream_unavailable: { status: 503, message: 'The upstream provider is overloaded or rate limiting the gateway.' },
  no_route_available: { status: 503, message: 'No provider can serve the model now: every route is failing or cooling down.' },
  rate_limiter_unavailable: { status: 503, message: 'The shared rate-limit store is unreachable and the gateway is configured to refuse requests meanwhile.' },
  gateway_overloaded: { status: 503, message: 'This gateway instance is overloaded and shed the request before doing any work; retry shortly.' },
  shutting_down: { status: 503, message: 'This gateway instance is shutting down and takes no new requests; retry, and the request will reach another instance.' },
  store_unavailable: { status: 503, message: "The gateway's store of accounts and credits did not answer; retry shortly." },
  idempotency_unavailable: { status: 503, message: 'The shared idempotency store is unreachable, so a request with an Idempotency-Key cannot be run safely now.' },
  not_ready: { status: 503, message: 'This gateway instance is not ready to serve requests.' },

  // 504
  upstream_timeout: { status: 504, message: 'The upstream provider did not answer in time.' },
} as const satisfies Record<string, CodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;
