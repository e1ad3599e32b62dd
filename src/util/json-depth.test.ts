import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from './json-depth.js';

const nested = (depth: number, open = '[', close = ']'): string => open.repeat(depth) + close.repeat(depth);

describe('nestsDeeperThan', () => {
  it('counts arrays and objects alike, up to and past the limit', () => {
    expect(nestsDeeperThan(nested(5), 5)).toBe(false);
    expect(nestsDeeperThan(nested(6), 5)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":{"c":[1]}}}', 3)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":{"c":[1]}}}', 4)).toBe(false);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ a: '[[[[[[[[[[{{{{{{{{{{', b: 'say \\"[[[[[[[[[[\\" \\\\', c: '"[[[[[[[[[[' });
    expect(nestsDeeperThan(text, 1)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify({ a: 'x\\', b: [[[1]]] }), 3)).toBe(true);
  });

  it('measures depth, not the number of siblings', () => {
    expect(nestsDeeperThan(JSON.stringify(Array.from({ length: 1000 }, () => [[1]])), 3)).toBe(false);
  });
});
