import { describe, expect, it } from 'vitest';
import { MemoryCreditGate } from './memory-credits.js';
import type { Store } from '../storage/types.js';

/** A store whose account reads wait until released, with a balance the test moves. */
function slowStore(balanceMicros: number) {
  const state = { balanceMicros, reads: 0, release: (): void => undefined };
  const store = {
    getAccount: async () => {
      state.reads++;
      // The read is taken now; its answer arrives when the test releases it.
      const seen = state.balanceMicros;
      await new Promise<void>((resolve) => (state.release = resolve));
      return { id: 'acct', name: null, tier: 't', balanceMicros: seen, createdAt: 0 };
    },
  };
  return { state, store: store as unknown as Store };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('MemoryCreditGate', () => {
  it('does not lose a top-up made while the first read of the balance was in flight', async () => {
    const { state, store } = slowStore(1_000);
    const gate = new MemoryCreditGate(store);
    const holding = gate.hold('acct', 'r1', 5_000);
    await tick();
    // A top-up commits after the read was taken, and is reported while the read is still in flight.
    state.balanceMicros += 10_000;
    gate.balanceMoved('acct', 10_000);
    state.release();
    await tick();
    // The balance is read again, and the second read sees the top-up, once.
    expect(state.reads).toBe(2);
    state.release();
    const hold = await holding;
    expect(hold.amountMicros).toBe(5_000);
    // 11,000 in all: 6,000 left beside the hold of 5,000, not 1,000 (top-up lost) nor 16,000 (counted twice).
    expect(() => gate.hold('acct', 'r2', 6_001)).toThrow();
    expect(() => gate.hold('acct', 'r3', 6_000)).not.toThrow();
  });

  it('reads the balance once when nothing moves it', async () => {
    const { state, store } = slowStore(1_000);
    const gate = new MemoryCreditGate(store);
    const holding = gate.hold('acct', 'r1', 500);
    await tick();
    state.release();
    await holding;
    expect(state.reads).toBe(1);
  });
});
