/**
 * The deadlines of one upstream call, all enforced by aborting the request's one AbortController
 * with the error to answer: the generation budget (408, from the start of the request) and the
 * upstream timeout (504: first until the upstream answers, then between stream chunks).
 * Adapters only have to honour the signal.
 */
import { GatewayError } from '../errors/index.js';

export interface DeadlineSettings {
  budgetMs: number;
  upstreamTimeoutMs: number;
  idleTimeoutMs: number;
}

export class CallDeadlines {
  private readonly budget: NodeJS.Timeout;
  private upstream: NodeJS.Timeout;
  private streaming = false;

  constructor(
    private readonly controller: AbortController,
    private readonly settings: DeadlineSettings,
  ) {
    this.budget = setTimeout(() => {
      controller.abort(new GatewayError('generation_timeout', `The generation exceeded its time budget of ${settings.budgetMs} ms.`));
    }, settings.budgetMs);
    this.upstream = setTimeout(() => this.upstreamTimedOut(settings.upstreamTimeoutMs, 'answer'), settings.upstreamTimeoutMs);
  }

  /** The upstream has started streaming: from now on the upstream timer measures idle gaps. */
  streamStarted(): void {
    this.streaming = true;
    clearTimeout(this.upstream);
    this.upstream = setTimeout(() => this.upstreamTimedOut(this.settings.idleTimeoutMs, 'send the next chunk'), this.settings.idleTimeoutMs);
  }

  /** A stream chunk arrived. */
  progress(): void {
    if (this.streaming) this.upstream.refresh();
  }

  clear(): void {
    clearTimeout(this.budget);
    clearTimeout(this.upstream);
  }

  private upstreamTimedOut(ms: number, what: string): void {
    this.controller.abort(new GatewayError('upstream_timeout', `The upstream provider did not ${what} within ${ms} ms.`));
  }
}
