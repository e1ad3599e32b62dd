/**
 * `X-Generation-Budget-Ms`: a caller may lower the generation budget of one request (never raise
 * it above the model's). Whole milliseconds, at least 1; a value above the model's budget, however
 * many digits it has, leaves the model's.
 */
import { GatewayError } from '../errors/index.js';

export const BUDGET_HEADER = 'x-generation-budget-ms';

export function budgetFromHeader(value: string | string[] | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value[0] : value;
  if (text !== undefined && /^\s*\d+\s*$/.test(text) && Number(text) >= 1) return Number(text);
  throw new GatewayError('invalid_parameter', `The X-Generation-Budget-Ms header must be a whole number of milliseconds, at least 1 (got "${String(text)}").`, {
    param: 'X-Generation-Budget-Ms',
  });
}
