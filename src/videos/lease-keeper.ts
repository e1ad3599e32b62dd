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

/** Starts keeping a lease held until `heldUntil`; returns the function that stops. */
export function keepLease(heldUntil: number, leaseMs: number, keeping: LeaseKeeping): () => void {
  const every = Math.max(1, Math.floor(leaseMs / 3));
  let done = false;
  const lose = (reason: GatewayError): void => {
    if (done) return;
    done = true;
    clearInterval(timer);
    keeping.lost(reason);
  };
  const unconfirmed = (): GatewayError => new GatewayError('store_unavailable', "The video job's lease could not be renewed before it may have run out.");
  const timer = setInterval(() => {
    // A renewal still unanswered (the store hangs) must not let the poll outlive its lease either.
    if (Date.now() >= heldUntil) return lose(unconfirmed());
    const until = Date.now() + leaseMs;
    keeping.renew(until).then(
      (held) => {
        if (held) heldUntil = Math.max(heldUntil, until);
        else lose(new GatewayError('video_not_found', 'The job was cancelled or taken over while it was polled.'));
      },
      (err: unknown) => {
        if (done) return;
        keeping.renewalFailed(err);
        // The next renewal would come too late: stop while the lease surely still holds.
        if (Date.now() + every >= heldUntil) lose(unconfirmed());
      },
    );
  }, every);
  return () => {
    done = true;
    clearInterval(timer);
  };
}
