/**
 * The caller-side SSE wire format, as OpenAI sends it: `data: <json>` events and a final
 * `data: [DONE]`. An error after the stream started is one frame carrying exactly the error
 * envelope, with no `choices`, after which the stream closes without [DONE]: the openai SDK, the
 * Vercel AI SDK and LangChain all raise such a frame as an error (shared/guides/CLIENTS.md).
 */
import { envelopeJson, type GatewayError } from '../errors/index.js';

/** The headers that describe an event stream (a replayed stream repeats them). */
export const SSE_CONTENT_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
} as const;

export const DONE_FRAME = 'data: [DONE]\n\n';

export function dataFrame(json: string): string {
  return `data: ${json}\n\n`;
}

export function errorFrame(err: GatewayError): string {
  return `data: ${envelopeJson(err)}\n\n`;
}
