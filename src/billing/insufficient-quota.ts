/** The 402 of spec 7: it says the balance, what is held, and what the request may cost. */
import { GatewayError } from '../errors/index.js';
import { formatCredits } from './pricing.js';

export function insufficientQuota(accountId: string, balanceMicros: number, heldMicros: number, costMicros: number): GatewayError {
  const held = heldMicros > 0 ? `, of which ${formatCredits(heldMicros)} are held by its requests in flight` : '';
  return new GatewayError(
    'insufficient_quota',
    `The account "${accountId}" has a balance of ${formatCredits(balanceMicros)} credits${held}; this request may cost up to ${formatCredits(costMicros)} credits. Top up the account, or make the request smaller (a lower max_tokens or max_output_tokens, fewer images, shorter audio or video).`,
  );
}
