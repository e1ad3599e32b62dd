import { describe, expect, it } from 'vitest';
import { parseRange } from './range-header.js';

describe('Range header', () => {
  it.each([
    ['bytes=0-0', { start: 0, end: 0 }],
    ['bytes=10-19', { start: 10, end: 19 }],
    ['bytes=90-', { start: 90, end: 99 }],
    ['bytes=90-500', { start: 90, end: 99 }],
    ['bytes=-10', { start: 90, end: 99 }],
    ['bytes=-500', { start: 0, end: 99 }],
    ['bytes=100-', 'unsatisfiable'],
    ['bytes=-0', 'unsatisfiable'],
    ['bytes=5-1', null],
    ['bytes=0-1,5-6', null],
    ['items=0-1', null],
    ['bytes=-', null],
  ])('reads %s of 100 bytes as %j', (header, expected) => {
    expect(parseRange(header, 100)).toEqual(expected);
  });

  it('is absent without the header', () => {
    expect(parseRange(undefined, 100)).toBeNull();
  });
});
