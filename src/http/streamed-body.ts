/**
 * Sends a body the upstream produces as it streams (speech audio), as a chat stream is sent:
 * read ahead to its first chunk, so that a body failing before it is answered as the error it is;
 * then written by hand, with backpressure, under the request's deadlines (a caller that stops
 * reading is cut once they end), and under an Idempotency-Key read to its end when the caller
 * leaves, so that the resend gets the whole body, charged once.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { toGatewayError } from '../errors/index.js';
import type { UnaryOutcome } from '../core/unary-service.js';
import { withHeaders } from '../core/call-failure.js';
import type { Cancellation } from '../util/cancellation.js';
import { auditOf } from './request-state.js';
import { startingWith, writeFrames } from './stream-writer.js';

export interface StreamedOutcome extends UnaryOutcome {
  readonly body: AsyncIterable<Uint8Array>;
}

export function isStreamed(outcome: UnaryOutcome): outcome is StreamedOutcome {
  return typeof outcome.body !== 'string' && !Buffer.isBuffer(outcome.body);
}

/** What the access log says of the request once its body ended. */
export interface SentBody {
  readonly status: number;
  /** Why the body ended short (`client_closed`, `error`), or undefined when it was sent whole. */
  readonly end: string | undefined;
}

/**
 * Sends the body and waits until it ended and its charge is committed (the drain waits for the
 * handler, and an Idempotency-Key claim must not be given back before its record). Throws what the
 * body failed with before its first byte, for the error handler to answer.
 */
export async function sendStreamedBody(request: FastifyRequest, reply: FastifyReply, outcome: StreamedOutcome, controller: Cancellation, keyed: boolean, logger: Logger): Promise<SentBody> {
  const audit = auditOf(request);
  const callerGone = (): SentBody => {
    reply.hijack();
    // Nothing reached the caller: logged and counted as its leaving, as before an answer.
    audit.errorCode = 'client_closed_request';
    return { status: 499, end: 'client_closed' };
  };
  if (reply.raw.destroyed) {
    // The caller left while the upstream was answering: its 'close' has passed, and a body sent
    // now would never be read, so the relay would never end.
    outcome.abandon();
    await outcome.done;
    return callerGone();
  }
  const iterator = outcome.body[Symbol.asyncIterator]();
  let first: IteratorResult<Uint8Array>;
  try {
    first = await iterator.next();
  } catch (err) {
    await outcome.done;
    // Answered after admission, so with the rate-limit headers, as any error of a limited endpoint.
    if (!reply.raw.destroyed) throw withHeaders(err, outcome.headers);
    return callerGone();
  }
  reply.hijack();
  const res = reply.raw;
  let end: string | undefined = 'client_closed';
  try {
    res.writeHead(200, { ...outcome.headers, 'x-request-id': request.id, 'content-type': outcome.contentType });
    if (await writeFrames(res, startingWith(first, iterator), controller.signal, keyed)) end = undefined;
  } catch (err) {
    // The upstream failed after the body started (cut, silent, out of budget): audio has no error
    // frame, so the caller gets a cut body; the relay's end charges what was sent.
    res.destroy();
    await iterator.return?.();
    const error = toGatewayError(err);
    if (error.code !== 'client_closed_request') {
      end = 'error';
      audit.errorCode = error.code;
      if (error.status === 500) logger.error({ err, request_id: request.id }, 'relay of a streamed body failed');
    }
  }
  await outcome.done;
  return { status: 200, end };
}
