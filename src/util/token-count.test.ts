import { describe, expect, it } from 'vitest';
import { usableTokenCount } from './token-count.js';

describe('usableTokenCount', () => {
  it.each([
    [120, 120],
    [10.4, 10],
    [Infinity, 2 ** 32],
    [-3, null],
    [Number.NaN, null],
    [null, null],
  ])('%s reported tokens count as %s', (reported, settled) => {
    expect(usableTokenCount(reported)).toBe(settled);
  });
});
