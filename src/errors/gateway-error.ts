/**
 * The one error class of the gateway. Inner layers throw it; the HTTP layer turns it into the
 * spec's envelope. It can only be made from a catalogue code, so status and type never drift.
 */
import { ERROR_CODES, type ErrorCode } from './catalogue.js';
import { STATUS_TABLE, type ErrorStatus, type ErrorType } from './status-table.js';

export interface GatewayErrorOptions {
  /** The offending field, in the request's own naming (e.g. `messages[0].role`). */
  param?: string | null;
  /** Seconds the client should wait; sent as Retry-After (and retry-after-ms). */
  retryAfterSeconds?: number;
  /** Overrides the status's retryable flag in `x-should-retry` (e.g. a daily cap: no point retrying today). */
  shouldRetry?: boolean;
  /** Further response headers, such as the rate-limit headers of a 429. */
  headers?: Record<string, string>;
  /** The underlying fault, for the log only: never sent to the client. */
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: ErrorStatus;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly retryAfterSeconds: number | undefined;
  readonly shouldRetry: boolean;
  /** Added to as the error travels out, e.g. with the rate-limit headers of the admitted request. */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message?: string, options: GatewayErrorOptions = {}) {
    const spec = ERROR_CODES[code];
    super(message ?? spec.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = spec.status;
    this.type = STATUS_TABLE[spec.status].type;
    this.param = options.param ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.shouldRetry = options.shouldRetry ?? STATUS_TABLE[spec.status].retryable;
    this.headers = options.headers ?? {};
  }
}
