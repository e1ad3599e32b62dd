import { describe, expect, it } from 'vitest';
import { SequentialIds, orderedHexAt, timeOfOrderedHex, timeOrderedRandomHex } from './ordered-id.js';

describe('timeOrderedRandomHex', () => {
  it('is 32 hex digits starting with the time, and differs every call', () => {
    const before = Date.now();
    const ids = Array.from({ length: 1000 }, () => timeOrderedRandomHex());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
    const ms = parseInt((ids[0] as string).slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now());
  });

  it('draws new randomness for every id, also past the first batch of random bytes drawn at once', () => {
    // 2,000 ids span several refills of the random pool; within one millisecond only the random part tells them apart.
    const randomParts = Array.from({ length: 2000 }, () => timeOrderedRandomHex().slice(12));
    expect(new Set(randomParts).size).toBe(randomParts.length);
  });
});

describe('SequentialIds', () => {
  it('sorts in creation order and stays unique through the sequence wrapping around', () => {
    const ids = new SequentialIds('le_');
    const seen = new Set<string>();
    let previous = '';
    for (let i = 0; i < 70_000; i++) {
      const id = ids.next();
      expect(seen.has(id)).toBe(false);
      seen.add(id);
      // Within one millisecond and one suffix the sequence orders them; across milliseconds the time does.
      if (previous.slice(3, 15) !== id.slice(3, 15)) expect(id > previous).toBe(true);
      previous = id;
    }
    expect(previous).toMatch(/^le_[0-9a-f]{32}$/);
  });

  it('gives two generators (two instances) different ids', () => {
    const a = new SequentialIds('le_');
    const b = new SequentialIds('le_');
    expect(a.next()).not.toBe(b.next());
  });
});

describe('orderedHexAt and timeOfOrderedHex', () => {
  it('carries the time it was made at, readable back', () => {
    const now = Date.now();
    const id = orderedHexAt(now);
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    expect(id).not.toBe(orderedHexAt(now));
    expect(timeOfOrderedHex(id)).toBe(now);
  });

  it('reads no time from digits that cannot be one', () => {
    expect(timeOfOrderedHex('ffffffffffffffffffffffff')).toBeUndefined();
    expect(timeOfOrderedHex('000000000000aaaaaaaaaaaa')).toBeUndefined();
    expect(timeOfOrderedHex('xyz')).toBeUndefined();
    expect(timeOfOrderedHex(orderedHexAt(Date.now() + 7 * 86_400_000))).toBeUndefined();
  });
});
