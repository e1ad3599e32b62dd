/**
 * The upstream request body: the caller's request as is, so that parameters Tollgate does not
 * know yet still reach the upstream, with only the fields the gateway must own replaced. A
 * shallow spread plus one JSON.stringify is the cheapest way to do that.
 */
import type { ChatCall } from '../types.js';

export function chatBody(call: ChatCall): string {
  const request = call.request;
  // The pipeline only sends non-streaming requests here; should one still carry `stream`, an
  // event stream back would be unreadable as a completion, so ask for JSON.
  if (request.stream) return JSON.stringify({ ...request, model: call.upstreamModel, stream: false, stream_options: undefined });
  return JSON.stringify({ ...request, model: call.upstreamModel });
}

export function streamBody(call: ChatCall): string {
  const request = call.request;
  const options = request.stream_options;
  // Usage is needed for accounting whether or not the caller asked for it; the caller's other
  // stream options are kept.
  const streamOptions = options?.include_usage === true ? options : { ...options, include_usage: true };
  return JSON.stringify({ ...request, model: call.upstreamModel, stream: true, stream_options: streamOptions });
}
