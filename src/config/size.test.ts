import { describe, expect, it } from 'vitest';
import { parseSize } from './size.js';

describe('parseSize', () => {
  it.each([[1024, 1024], ['512kb', 524288], ['4mb', 4194304], ['1.5 MB', 1572864], ['10', 10]])('%s → %i', (input, bytes) => {
    expect(parseSize(input)).toBe(bytes);
  });
  it('rejects other text', () => expect(() => parseSize('lots')).toThrow(/not a size/));
});
