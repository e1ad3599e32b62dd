/**
 * Credits on the admin API's wire. The store keeps millionths of a credit (integers, exact); the
 * API shows both a decimal number of credits and the exact `*_micros` integer, and takes credits
 * as a decimal number with at most six decimal places, converted from the number's text as the
 * request wrote it (number-text.ts): 0.1 is exactly 100000 micros, and 1.0000000000000001, which
 * JSON.parse would read as exactly 1, is refused for its sixteen decimals.
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

/** A number as JSON writes it: sign, whole part, fraction, exponent. */
const JSON_NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * A number of credits, as its decimal text, as exact micros; or a 400 naming `param` when it is
 * out of range or has more than six decimal places. Worked on the digits, never on a double.
 * `sign` says which amounts are allowed.
 */
export function microsFromCredits(text: string, param: string, sign: 'positive' | 'non-negative' | 'non-zero'): number {
  const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  const match = JSON_NUMBER.exec(text);
  const [, minus = '', whole = '', fraction = '', exponent = '0'] = match ?? [];
  // The value is 0.<digits> × 10^point: significant digits only, the point moved to match.
  const all = whole + fraction;
  const lead = all.search(/[1-9]/);
  const digits = lead === -1 ? '' : all.slice(lead).replace(/0+$/, '');
  const point = whole.length + Number(exponent) - Math.max(lead, 0);
  // 10^9 = 0.1 × 10^10: beyond it are points past 10, and at 10 anything but the digit 1 alone.
  if (match === null || (digits !== '' && (point > 10 || (point === 10 && digits !== '1')))) {
    throw new GatewayError('invalid_parameter', `${param} must be a number of credits between -${MAX_CREDITS} and ${MAX_CREDITS}, got ${shown}.`, { param });
  }
  if (digits.length - point > 6) {
    throw new GatewayError('invalid_parameter', `${param} may have at most 6 decimal places (a credit is counted in millionths), got ${shown}.`, { param });
  }
  // At most 16 digits (point ≤ 10, six decimals), below 2^53 at most 10^15: exact as a number.
  const magnitude = digits === '' ? 0 : Number(digits.padEnd(point + 6, '0'));
  const micros = minus === '-' && magnitude !== 0 ? -magnitude : magnitude;
  const ok = sign === 'positive' ? micros > 0 : sign === 'non-negative' ? micros >= 0 : micros !== 0;
  if (!ok) {
    const rule = sign === 'positive' ? 'greater than 0' : sign === 'non-negative' ? 'at least 0' : 'different from 0 (positive adds credit, negative removes it)';
    throw new GatewayError('invalid_parameter', `${param} must be ${rule}, got ${shown}.`, { param });
  }
  return micros;
}
