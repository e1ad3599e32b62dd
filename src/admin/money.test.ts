import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/index.js';
import { formatMicros, microsFromCredits } from './money.js';

const refusal = (text: string, sign: 'positive' | 'non-negative' | 'non-zero' = 'non-zero'): string => {
  try {
    microsFromCredits(text, 'credits', sign);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).param).toBe('credits');
    return (err as GatewayError).message;
  }
  throw new Error(`${text} was accepted`);
};

describe('microsFromCredits', () => {
  it.each([
    ['1', 1_000_000],
    ['0.1', 100_000],
    ['-2.5', -2_500_000],
    ['0.000001', 1],
    ['2.50000000000000000000', 2_500_000],
    ['0.1e1', 1_000_000],
    ['1E9', 1_000_000_000_000_000],
    ['-1000000000', -1_000_000_000_000_000],
    ['999999999.999999', 999_999_999_999_999],
    ['1e-6', 1],
    ['123456e-6', 123_456],
    ['0.00000000000000000001e20', 1_000_000],
  ])('reads %s as %i micros, from its digits', (text, micros) => {
    expect(microsFromCredits(text, 'credits', 'non-zero')).toBe(micros);
  });

  it('refuses more than six decimal places even where the nearest double has none', () => {
    // JSON.parse reads both as exactly 1: only the text tells.
    expect(Number('1.0000000000000001')).toBe(1);
    expect(refusal('1.0000000000000001')).toBe('credits may have at most 6 decimal places (a credit is counted in millionths), got 1.0000000000000001.');
    expect(refusal('0.99999999999999999999')).toContain('at most 6 decimal places');
    expect(refusal('1.0000005')).toContain('at most 6 decimal places');
    expect(refusal('1e-7')).toContain('at most 6 decimal places');
    expect(refusal('1e-99999999999999999999')).toContain('at most 6 decimal places');
  });

  it('refuses amounts beyond 10^9 credits, however they are written', () => {
    for (const text of ['1000000000.000001', '1000000001', '1e10', '-1.5e9', '1e99999999999999999999', 'Infinity']) {
      expect(refusal(text), text).toContain('between -1000000000 and 1000000000');
    }
  });

  it('takes zero as zero, however it is written, and applies the sign rule', () => {
    expect(microsFromCredits('-0', 'credits', 'non-negative')).toBe(0);
    expect(Object.is(microsFromCredits('-0.0e5', 'credits', 'non-negative'), 0)).toBe(true);
    expect(refusal('0e99999999999999999999', 'positive')).toContain('greater than 0');
    expect(refusal('-0.000001', 'non-negative')).toContain('at least 0');
    expect(refusal('0.000000', 'non-zero')).toContain('different from 0');
  });

  it('shortens a long number in the message', () => {
    expect(refusal(`1.${'0'.repeat(100)}1`)).toContain(`got 1.${'0'.repeat(38)}…`);
  });
});

describe('formatMicros', () => {
  it('writes the exact decimal', () => {
    expect([250_500_000, -1, 0, 1_000_000_000_000_000].map(formatMicros)).toEqual(['250.5', '-0.000001', '0', '1000000000']);
  });
});
