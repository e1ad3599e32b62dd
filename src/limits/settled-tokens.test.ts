import { describe, expect, it } from 'vitest';
import { settledTokens } from './settled-tokens.js';

describe('settledTokens', () => {
  it.each([
    [120, 120],
    [10.4, 10],
    [Infinity, 2 ** 32],
    [-3, null],
    [Number.NaN, null],
    [null, null],
  ])('%s tokens settle as %s', (reported, settled) => {
    expect(settledTokens(reported)).toBe(settled);
  });
});
