/**
 * Credits on the admin API's wire. The store keeps millionths of a credit (integers, exact); the
 * API shows both a decimal number of credits and the exact `*_micros` integer, and takes credits
 * as a decimal number with at most six decimal places, converted through its decimal text so
 * that 0.1 is exactly 100000 micros.
 */
import { GatewayError } from '../errors/index.js';
import { MICROS_PER_CREDIT } from '../billing/pricing.js';

/** The largest amount one request may move: 10^9 credits (10^15 micros, well inside 2^53). */
export const MAX_CREDITS = 1_000_000_000;

/** Micros as a decimal number of credits (the nearest double; `*_micros` is the exact value). */
export function creditsOf(micros: number): number {
  return micros / MICROS_PER_CREDIT;
}

/** Exact decimal text of an amount in micros: 250500000 → "250.5", -1 → "-0.000001". */
export function formatMicros(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / MICROS_PER_CREDIT);
  const fraction = String(abs % MICROS_PER_CREDIT).padStart(6, '0').replace(/0+$/, '');
  return `${sign}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

/**
 * A number of credits as exact micros, or a 400 naming `param` when it has more than six decimal
 * places or is out of range. `sign` says which amounts are allowed.
 */
export function microsFromCredits(value: number, param: string, sign: 'positive' | 'non-negative' | 'non-zero'): number {
  if (!Number.isFinite(value) || Math.abs(value) > MAX_CREDITS) {
    throw new GatewayError('invalid_parameter', `${param} must be a number of credits between -${MAX_CREDITS} and ${MAX_CREDITS}, got ${value}.`, { param });
  }
  const text = value.toFixed(6);
  if (Number(text) !== value) {
    throw new GatewayError('invalid_parameter', `${param} may have at most 6 decimal places (a credit is counted in millionths), got ${value}.`, { param });
  }
  const micros = Number(text.replace('.', '')) + 0; // + 0 turns -0 into 0
  const ok = sign === 'positive' ? micros > 0 : sign === 'non-negative' ? micros >= 0 : micros !== 0;
  if (!ok) {
    const rule = sign === 'positive' ? 'greater than 0' : sign === 'non-negative' ? 'at least 0' : 'different from 0 (positive adds credit, negative removes it)';
    throw new GatewayError('invalid_parameter', `${param} must be ${rule}, got ${value}.`, { param });
  }
  return micros;
}
