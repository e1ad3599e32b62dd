/**
 * Request ids: `req_` and 32 hex digits (time first, then randomness: the ledger and usage rows
 * keyed by them are appended, not scattered), generated here for every request. An id sent by the
 * client (X-Request-Id or X-Client-Request-Id) is not adopted, because the id is what the request
 * is recorded under and must be unique; it is logged beside ours as `client_request_id`.
 */
import { timeOrderedRandomHex } from '../util/ordered-id.js';

export function newRequestId(): string {
  return `req_${timeOrderedRandomHex()}`;
}
