/**
 * Longest wait a client is left to sleep through on its own before retrying: the Vercel AI SDK and
 * LangChain honour a Retry-After of at most 60 s, and the official SDK sleeps for any, however
 * long (CLIENTS.md). A retryable error asking for a longer wait is sent with `x-should-retry:
 * false`: the caller gets the error and the wait at once instead of a call held for minutes.
 */
export const LONGEST_CLIENT_WAIT_SECONDS = 60;

/** Whether a client should retry by itself an error that is retryable but asks it to wait `seconds`. */
export function retryableAfter(seconds: number, retryable = true): boolean {
  return retryable && seconds <= LONGEST_CLIENT_WAIT_SECONDS;
}
