import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from './json-depth.js';

const nested = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth));

describe('nestsDeeperThan', () => {
  it('counts arrays and objects alike, up to and past the limit', () => {
    expect(nestsDeeperThan(nested(5), 5)).toBe(false);
    expect(nestsDeeperThan(nested(6), 5)).toBe(true);
    expect(nestsDeeperThan(JSON.parse('{"a":{"b":{"c":[1]}}}'), 3)).toBe(true);
    expect(nestsDeeperThan(JSON.parse('{"a":{"b":{"c":[1]}}}'), 4)).toBe(false);
  });

  it('finds the deep branch among shallow ones, and takes scalars as no depth', () => {
    expect(nestsDeeperThan({ a: 1, b: [1, 2], c: { d: [[[1]]] } }, 4)).toBe(true);
    expect(nestsDeeperThan('[[[[[[', 1)).toBe(false);
    expect(nestsDeeperThan(null, 0)).toBe(false);
  });

  it('measures depth, not the number of siblings, and walks a value far deeper than the stack allows', () => {
    expect(nestsDeeperThan(Array.from({ length: 1000 }, () => [[1]]), 3)).toBe(false);
    expect(nestsDeeperThan(nested(100_000), 128)).toBe(true);
  });
});
