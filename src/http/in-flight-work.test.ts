import { describe, expect, it } from 'vitest';
import { InFlightWork } from './in-flight-work.js';

describe('InFlightWork', () => {
  it('is idle at once when nothing runs, and once the last handler ends', async () => {
    const work = new InFlightWork();
    expect(await work.idle(10)).toBe(true);
    work.begin();
    work.begin();
    const idle = work.idle(1000);
    work.end();
    expect(work.count).toBe(1);
    work.end();
    expect(await idle).toBe(true);
  });

  it('gives up after the timeout while a handler still runs', async () => {
    const work = new InFlightWork();
    work.begin();
    expect(await work.idle(20)).toBe(false);
    expect(work.count).toBe(1);
  });
});
