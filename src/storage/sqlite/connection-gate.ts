/**
 * Whether the store's connection may take statements now. The checkpointer closes the gate while it
 * starts the write-ahead log over (checkpointer.ts): the restart holds the log's write lock from
 * start to end, so a write run meanwhile would wait for it in SQLite's busy handler, on the event
 * loop, stalling every request. The query layer's statements wait here instead, before they take
 * the connection (open-sqlite.ts), and the store holds its settlement commits (sqlite-store.ts).
 */
export class ConnectionGate {
  /** Who waits for the gate to open; null while it is open. */
  private waiters: Array<() => void> | null = null;

  close(): void {
    this.waiters ??= [];
  }

  open(): void {
    const waiters = this.waiters;
    this.waiters = null;
    if (waiters !== null) for (const wake of waiters) wake();
  }

  /** Undefined while open, so that the usual case costs no promise; else a promise of the opening. */
  whenOpen(): Promise<void> | undefined {
    const waiters = this.waiters;
    return waiters === null ? undefined : new Promise((resolve) => waiters.push(resolve));
  }
}
