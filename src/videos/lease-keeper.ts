/**
 * Keeps a poll's lease on a video job while the poll runs (a download may outlast `lease_ms`):
 * renews it every third of the lease, and gives it up, once, as soon as it can no longer be
 * counted on: a renewal finds it gone (the job cancelled or taken over), or the store did not
 * confirm the renewals in time for the lease, so that another instance may take the job. The
 * poll then stops rather than download and record what another poll records too.
 */
import { GatewayError } from '../errors/index.js';

export interface LeaseKeeping {
  /** Renews the lease until `until`; false once the lease is no longer the poll's. */
  renew(until: number): Promise<boolean>;
  /** The lease can no longer be counted on: why, to end the poll's upstream calls with. */
  lost(reason: GatewayError): void;
  /** A renewal the store did not confirm. */
  renewalFailed(err: unknown): void;
}

/**
 * Starts keeping a lease held until `heldUntil`; returns the function that stops. The poll is
 * stopped half a renewal interval before the lease it can count on runs out: by a timer of its
 * own, not at the renewal ticks, which need not fall just before the end (a lease of 10,000 ms
 * renewed every 3,333 would otherwise be overrun by a third of it when renewals hang).
 */
export function keepLease(heldUntil: number, leaseMs: number, keeping: LeaseKeeping): () => void {
  const every = Math.max(1, Math.floor(leaseMs / 3));
  const margin = Math.max(1, Math.floor(every / 2));
  let done = false;
  let deadline: NodeJS.Timeout | undefined;
  const stop = (): void => {
    done = true;
    clearInterval(timer);
    clearTimeout(deadline);
  };
  const lose = (reason: GatewayError): void => {
    if (done) return;
    stop();
    keeping.lost(reason);
  };
  const unconfirmed = (): GatewayError => new GatewayError('store_unavailable', "The video job's lease could not be renewed before it may have run out.");
  const armDeadline = (): void => {
    clearTimeout(deadline);
    deadline = setTimeout(() => lose(unconfirmed()), Math.max(0, heldUntil - margin - Date.now()));
  };
  // One renewal at a time: two under way could commit out of order and leave the earlier time. A
  // tick that finds one under way renews as soon as it ends, so that a slow store keeps the pace.
  let renewing = false;
  let due = false;
  const renew = (): void => {
    if (renewing) {
      due = true;
      return;
    }
    renewing = true;
    due = false;
    const until = Date.now() + leaseMs;
    keeping
      .renew(until)
      .then(
        (held) => {
          if (done) return;
          if (!held) return lose(new GatewayError('video_not_found', 'The job was cancelled or taken over while it was polled.'));
          if (until > heldUntil) {
            heldUntil = until;
            armDeadline();
          }
        },
        (err: unknown) => {
          if (done) return;
          keeping.renewalFailed(err);
          // The next renewal would come too late: stop while the lease surely still holds.
          if (Date.now() + every >= heldUntil - margin) lose(unconfirmed());
        },
      )
      .finally(() => {
        renewing = false;
        if (due && !done) renew();
      });
  };
  const timer = setInterval(renew, every);
  armDeadline();
  return stop;
}
