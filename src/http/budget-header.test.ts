import { describe, expect, it } from 'vitest';
import { budgetFromHeader } from './budget-header.js';

describe('budgetFromHeader', () => {
  it('reads whole milliseconds, and leaves a value of any size to be capped by the model\'s budget', () => {
    expect(budgetFromHeader(undefined)).toBeUndefined();
    expect(budgetFromHeader(' 1500 ')).toBe(1500);
    expect(budgetFromHeader(['250', '900'])).toBe(250);
    expect(budgetFromHeader('99999999999999999999')).toBe(1e20);
  });

  it.each(['0', '-5', '1.5', 'soon', '', '1e3'])('refuses %j with a 400 naming the header', (value) => {
    expect(() => budgetFromHeader(value)).toThrow(expect.objectContaining({ status: 400, code: 'invalid_parameter', param: 'X-Generation-Budget-Ms' }));
  });
});
