import { describe, expect, it } from 'vitest';
import { Cancellation, sleep } from './cancellation.js';

describe('Cancellation', () => {
  it('notifies once, keeps the first reason, and is ignored afterwards', () => {
    const c = new Cancellation();
    let calls = 0;
    c.signal.once('abort', () => calls++);
    c.abort('first');
    c.abort('second');
    expect(c.aborted).toBe(true);
    expect(c.reason).toBe('first');
    expect(calls).toBe(1);
  });

  it('sleeps to the end, or rejects as soon as it is cancelled, leaving no listener behind', async () => {
    const c = new Cancellation();
    await sleep(5, c.signal, () => new Error('no'));
    expect(c.listenerCount('abort')).toBe(0);
    const pending = sleep(10_000, c.signal, (s) => new Error(String(s.reason)));
    c.abort('gone');
    await expect(pending).rejects.toThrow('gone');
    await expect(sleep(1, c.signal, () => new Error('already'))).rejects.toThrow('already');
  });
});
