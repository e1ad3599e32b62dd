/**
 * A request whose token bound alone is above the key's tokens per minute can never be admitted,
 * whatever the wait. The specification answers every limit exceeded with 429 (section 8), as
 * OpenAI does a request too large for an organisation's tokens per minute, so this is a 429 too,
 * with the rate-limit headers and Retry-After of any 429 (the state read without counting), and
 * `x-should-retry: false`, which the official SDKs obey: no wait cures it, so they do not resend.
 */
import { GatewayError } from '../errors/index.js';
import type { LimitPlan } from './plan.js';
import type { RateLimiter } from './types.js';

/** When the limiter cannot be read, the window's length: the most a tokens-per-minute wait can be. */
const WINDOW_SECONDS = 60;

export async function overTokenLimit(limiter: RateLimiter, keyId: string, plan: LimitPlan, message: string, param: string): Promise<GatewayError> {
  let headers: Record<string, string> = {};
  try {
    const view = limiter.peek(keyId, plan);
    headers = { ...(view instanceof Promise ? await view : view).headers };
  } catch {
    // The limiter cannot be read (Redis down): the refusal goes out without the headers.
  }
  const reset = Number(headers['x-ratelimit-reset']);
  const retryAfterSeconds = Number.isFinite(reset) ? Math.max(1, Math.ceil(reset - Date.now() / 1000)) : WINDOW_SECONDS;
  return new GatewayError('request_exceeds_token_limit', message, { param, headers, retryAfterSeconds, shouldRetry: false });
}
