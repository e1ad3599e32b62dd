/**
 * Which routes just failed a caller for a model, so that the caller's resend after a 502, 503 or
 * 504 is tried elsewhere first (spec 1: "may pick a different provider on a retry"). Kept per
 * instance, bounded, and forgotten after a short while; a resend that lands on another instance
 * still benefits from that instance's circuit breakers.
 */

const MAX_ENTRIES = 10_000;

interface Entry {
  readonly routes: ReadonlySet<string>;
  readonly until: number;
}

export class RecentFailures {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  note(callerId: string, modelId: string, routeKeys: readonly string[]): void {
    if (this.ttlMs === 0 || routeKeys.length === 0) return;
    const key = `${callerId}\u0000${modelId}`;
    this.entries.delete(key);
    if (this.entries.size >= MAX_ENTRIES) {
      // Insertion order: the first entry is the oldest.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { routes: new Set(routeKeys), until: this.clock() + this.ttlMs });
  }

  /** The routes to try last for this caller and model, if any. */
  avoided(callerId: string, modelId: string): ReadonlySet<string> | undefined {
    if (this.entries.size === 0) return undefined;
    const key = `${callerId}\u0000${modelId}`;
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until <= this.clock()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.routes;
  }

  /** A success for the caller clears what its failures taught. */
  forget(callerId: string, modelId: string): void {
    if (this.entries.size !== 0) this.entries.delete(`${callerId}\u0000${modelId}`);
  }
}
