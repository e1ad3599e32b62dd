import { describe, expect, it } from 'vitest';
import { SlidingWindow, WINDOW_BUCKETS, msUntilRoom } from './window.js';

describe('SlidingWindow', () => {
  it('keeps a count for 60 whole seconds and then drops it', () => {
    const w = new SlidingWindow();
    w.add(100, 3);
    w.advance(159);
    expect(w.total).toBe(3);
    w.advance(160);
    expect(w.total).toBe(0);
  });

  it('drops buckets one by one as time passes, and everything after a long gap', () => {
    const w = new SlidingWindow();
    w.add(100, 1);
    w.add(130, 2);
    w.add(150, 4);
    w.advance(161);
    expect(w.total).toBe(6);
    w.advance(191);
    expect(w.total).toBe(4);
    w.add(500, 1);
    expect(w.total).toBe(1);
    expect(w.buckets()).toEqual([{ second: 500, amount: 1 }]);
  });

  it('never lets a 59-second span hold more than what it counted', () => {
    // One per second for 200 seconds with a limit of 10: admitted ones never exceed 10 in any span.
    const w = new SlidingWindow();
    const admitted: number[] = [];
    for (let ms = 0; ms < 200_000; ms += 250) {
      const second = Math.floor(ms / 1000);
      w.advance(second);
      if (w.total + 1 <= 10) {
        w.add(second, 1);
        admitted.push(ms);
      }
    }
    for (const start of admitted) expect(admitted.filter((t) => t >= start && t < start + 59_000).length).toBeLessThanOrEqual(10);
  });

  it('corrects a bucket that is still in the window, never below zero, and ignores one that left', () => {
    const w = new SlidingWindow();
    w.add(100, 1000);
    w.adjust(100, -900, 110);
    expect(w.total).toBe(100);
    w.adjust(100, -500, 110);
    expect(w.total).toBe(0);
    w.add(120, 50);
    w.adjust(100, 10, 200);
    expect(w.total).toBe(0);
  });

  it('is idle once everything left the window', () => {
    const w = new SlidingWindow();
    w.add(10, 1);
    expect(w.idleAt(69)).toBe(false);
    expect(w.idleAt(10 + WINDOW_BUCKETS)).toBe(true);
  });
});

describe('msUntilRoom', () => {
  const buckets = [
    { second: 100, amount: 2 },
    { second: 110, amount: 3 },
  ];

  it('is zero when there is room', () => {
    expect(msUntilRoom(buckets, 5, 10, 5, 105_000)).toBe(0);
  });

  it('waits for just enough of the oldest buckets to leave', () => {
    expect(msUntilRoom(buckets, 5, 5, 1, 120_000)).toBe(160_000 - 120_000);
    expect(msUntilRoom(buckets, 5, 5, 3, 120_000)).toBe(170_000 - 120_000);
  });

  it('is infinite when the need is above the limit', () => {
    expect(msUntilRoom(buckets, 5, 5, 6, 120_000)).toBe(Infinity);
  });
});
