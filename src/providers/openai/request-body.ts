/**
 * The upstream request body: the caller's request as is, so that parameters Tollgate does not
 * know yet still reach the upstream, with only the fields the gateway must own replaced. A
 * shallow spread plus one JSON.stringify is the cheapest way to do that, provided a field the
 * request may lack is named before the spread and set after it: on Node 20 a property added
 * to a spread's copy misses V8's inline caches and costs about 1 µs, one the copy already has
 * does not.
 */
import type { ChatCall } from '../types.js';
import { fitsOpenAI, withFittedToolCallIds } from '../tool-call-id-fit.js';

/** Which field carries the output cap: OpenAI's current one, or the older one some servers still need. */
export type OutputCapField = 'max_completion_tokens' | 'max_tokens';

/**
 * The model's output cap when the caller gave none: token reservations and worst-case costs count
 * on it, so the upstream must not produce more.
 */
function withOutputCap(call: ChatCall, capField: OutputCapField): ChatCall['request'] {
  const request = call.request;
  if (request.max_tokens != null || request.max_completion_tokens != null) return request;
  const cap = call.defaultMaxTokens;
  // Set again after the spread: the request may hold the field as null.
  const capped = capField === 'max_tokens' ? { max_tokens: cap, ...request } : { max_completion_tokens: cap, ...request };
  capped[capField] = cap;
  return capped;
}

export function chatBody(call: ChatCall, capField: OutputCapField): string {
  const request = withOutputCap(call, capField);
  const messages = withFittedToolCallIds(request.messages, fitsOpenAI);
  // The pipeline only sends non-streaming requests here; should one still carry `stream`, an
  // event stream back would be unreadable as a completion, so ask for JSON.
  if (request.stream) return JSON.stringify({ ...request, model: call.upstreamModel, messages, stream: false, stream_options: undefined });
  return JSON.stringify({ ...request, model: call.upstreamModel, messages });
}

export function streamBody(call: ChatCall, capField: OutputCapField): string {
  const request = withOutputCap(call, capField);
  const options = request.stream_options;
  // Usage is needed for accounting whether or not the caller asked for it; the caller's other
  // stream options are kept.
  const streamOptions = options?.include_usage === true ? options : { ...options, include_usage: true };
  const body = { stream_options: streamOptions, ...request };
  body.model = call.upstreamModel;
  body.messages = withFittedToolCallIds(request.messages, fitsOpenAI);
  body.stream = true;
  body.stream_options = streamOptions;
  return JSON.stringify(body);
}
