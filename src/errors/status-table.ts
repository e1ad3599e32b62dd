/**
 * The spec's error table (section 7) as data: for each HTTP status the gateway may send,
 * its `error.type` and whether a client should retry it. Nothing else in the code decides these.
 */
export const STATUS_TABLE = {
  400: { type: 'invalid_request_error', retryable: false },
  401: { type: 'authentication_error', retryable: false },
  402: { type: 'insufficient_quota', retryable: false },
  403: { type: 'permission_error', retryable: false },
  404: { type: 'not_found_error', retryable: false },
  408: { type: 'timeout_error', retryable: true },
  409: { type: 'invalid_request_error', retryable: false },
  413: { type: 'invalid_request_error', retryable: false },
  // Not in the spec's table: a Range header past the end of an asset (RFC 9110).
  416: { type: 'invalid_request_error', retryable: false },
  422: { type: 'invalid_request_error', retryable: false },
  // Not in the spec's table and never sent: nginx's 499, the status recorded (access log, metrics,
  // usage) for a request whose caller closed its connection before the answer.
  499: { type: 'client_closed', retryable: false },
  429: { type: 'rate_limit_error', retryable: true },
  500: { type: 'server_error', retryable: true },
  501: { type: 'server_error', retryable: false },
  502: { type: 'provider_error', retryable: true },
  503: { type: 'service_unavailable', retryable: true },
  504: { type: 'timeout_error', retryable: true },
} as const satisfies Record<number, { type: string; retryable: boolean }>;

export type ErrorStatus = keyof typeof STATUS_TABLE;
export type ErrorType = (typeof STATUS_TABLE)[ErrorStatus]['type'];
