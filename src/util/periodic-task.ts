/**
 * Background work that runs every so often (sweeps of expired rows, polling of jobs): never two
 * runs at once, a failed run reported and tried again next time, and a stop that waits for the
 * run under way. The timer does not keep the process alive.
 */
export class PeriodicTask {
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | null = null;

  constructor(
    private readonly work: () => Promise<void>,
    everyMs: number,
    private readonly onError: (err: unknown) => void,
  ) {
    this.timer = setInterval(() => void this.run(), everyMs);
    this.timer.unref();
  }

  /** Runs now, or joins the run under way. Never rejects. */
  run(): Promise<void> {
    this.running ??= (async () => {
      try {
        await this.work();
      } catch (err) {
        this.onError(err);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
