/**
 * The cancellation of one request as its caller sees it. A caller that goes away stops the
 * upstream call at once: no tokens burnt for nobody. Except under an Idempotency-Key: then the
 * request runs to its end and is recorded, so that the caller's resend gets the whole answer,
 * charged once (a drain past its deadline still cancels it, see drain.ts).
 *
 * The abort's reason is the outcome recorded for the request (499 `client_closed_request` in the
 * access log, the metrics and its usage record), not an upstream failure: the upstream did
 * nothing wrong, and nobody is there to receive an answer.
 */
import type { ServerResponse } from 'node:http';
import { GatewayError } from '../errors/index.js';
import { Cancellation } from '../util/cancellation.js';

export function callerCancellation(res: ServerResponse, runsWithoutCaller: boolean): Cancellation {
  const controller = new Cancellation();
  if (!runsWithoutCaller) {
    res.once('close', () => {
      if (!res.writableFinished) controller.abort(new GatewayError('client_closed_request'));
    });
  }
  return controller;
}
