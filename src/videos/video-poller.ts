/**
 * Moves video jobs along: every `poll_interval_ms` this instance leases the jobs whose next poll
 * is due (no other instance polls them meanwhile), asks their upstream how they are, and records
 * the answer. A finished video is streamed into an asset before the job says `completed`; a job
 * that failed upstream is refunded. Because the state lives in the store, a restarted gateway
 * (or another instance, once the lease expires) simply carries on polling.
 *
 * Each poll runs on its own, not as part of its round: an upstream that hangs holds its own job
 * until the call's time limit, not every other job's poll. A poll renews its lease while it runs
 * (a download may take longer than `lease_ms`), so that no other instance takes the job over and
 * downloads the same video again, and stops if the renewal finds the job cancelled or taken over,
 * or cannot renew it before it may have run out. Every write of a poll is conditional on its own
 * lease, so that of two polls of one job (the lease ran out under the first) only the one holding
 * the lease records an outcome: the job completes or fails, and is refunded, once.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { GatewayError, toGatewayError, scrubSecrets } from '../errors/index.js';
import type { Assets } from '../assets/assets.js';
import type { ProviderAdapter, VideoJobRef } from '../providers/types.js';
import type { Store, VideoJobChanges, VideoJobRecord } from '../storage/types.js';
import { BlobTooLargeError } from '../storage/blobs/types.js';
import { Cancellation } from '../util/cancellation.js';
import { IN_FLIGHT, type VideoJobs } from './video-jobs.js';
import { keepLease } from './lease-keeper.js';
import { PeriodicTask } from '../util/periodic-task.js';

export interface PollerSettings {
  readonly pollIntervalMs: number;
  readonly leaseMs: number;
  readonly maxBytes: number;
  readonly giveUpAfterMs: number;
  /** Time limit of a poll, and of a download until its first bytes. */
  readonly callTimeoutMs: number;
  /** A download that sends nothing for this long is given up (and tried again later). */
  readonly idleTimeoutMs: number;
}

/** Jobs leased in one call to the store. */
const BATCH = 20;
/** Polls running at once on this instance; further due jobs wait for a later round. */
const MAX_POLLS = 50;

export class VideoPoller {
  /** This instance's name, the start of each lease it takes. */
  readonly owner = `poller_${randomBytes(8).toString('hex')}`;
  private leasesTaken = 0;
  private readonly rounds: PeriodicTask;
  private readonly stopping = new Cancellation();
  private readonly polls = new Set<Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly jobs: VideoJobs,
    private readonly assets: Assets,
    private readonly adapters: ReadonlyMap<string, ProviderAdapter>,
    private readonly settings: PollerSettings,
    private readonly logger: Logger,
  ) {
    // Every poll under way listens for the close.
    this.stopping.setMaxListeners(MAX_POLLS + 1);
    this.rounds = new PeriodicTask(() => this.pollDue(), settings.pollIntervalMs, (err) => this.logger.warn({ err }, 'could not poll video jobs; trying again next round'));
  }

  /** One round now: leases the due jobs and starts their polls; resolves once every poll under way has ended. */
  async tick(): Promise<void> {
    await this.rounds.run();
    while (this.polls.size > 0) await Promise.all(this.polls);
  }

  private async pollDue(): Promise<void> {
    for (;;) {
      const room = Math.min(BATCH, MAX_POLLS - this.polls.size);
      if (this.stopping.aborted || room <= 0) return;
      // Each round's lease is its own, not just this instance's: a poll that outlived its lease
      // must not write over the poll that took the job next, even one of this instance.
      const lease = `${this.owner}.${(++this.leasesTaken).toString(36)}`;
      const now = Date.now();
      const due = await this.store.leaseDueVideoJobs(lease, now, this.settings.leaseMs, room);
      for (const job of due) this.start({ ...job, leaseOwner: lease, leaseUntil: now + this.settings.leaseMs });
      if (due.length < room) return;
    }
  }

  private start(job: LeasedJob): void {
    const poll = this.poll(job)
      .catch((err: unknown) => this.logger.warn({ err, video_id: job.id }, 'could not record a video poll; the job is polled again once its lease ends'))
      .finally(() => this.polls.delete(poll));
    this.polls.add(poll);
  }

  private async poll(job: LeasedJob): Promise<void> {
    if (!(await this.jobs.chargeOnRecord(job))) {
      await this.awaitCharge(job);
      return;
    }
    // Decided when the poll starts: a long download must not make its own failure look resumed.
    const resumed = this.resumed(job);
    const videos = this.adapters.get(job.provider)?.videos;
    if (videos === undefined) {
      // Another instance may still have the provider (a configuration being rolled out): the job is
      // left to it, and failed only once no instance could poll it for give_up_after_ms.
      if (this.givesUp(job, Date.now(), resumed)) await this.fail(job, 'provider_unavailable', `The provider "${job.provider}" of this job is no longer configured for video.`);
      else await this.retryLater(job, resumed);
      return;
    }
    // Leased as the gateway began to close: given back for another instance, or the next start.
    if (this.stopping.aborted) {
      await this.releaseLease(job);
      return;
    }
    const call = new Cancellation();
    let lost = false;
    let answered = false;
    let downloadFrom: number | undefined;
    const abort = (): void => call.abort(new GatewayError('upstream_timeout', 'The video poll took too long.'));
    const timeout = setTimeout(abort, this.settings.callTimeoutMs);
    const stopRenewing = keepLease(job.leaseUntil, this.settings.leaseMs, {
      renew: (until) => this.renewLease(job, until),
      lost: (reason) => {
        lost = true;
        call.abort(reason);
      },
      renewalFailed: (err) => this.logger.warn({ err, video_id: job.id }, 'could not renew a video job\'s lease'),
    });
    this.stopping.once('abort', abort);
    const ref: VideoJobRef = { upstreamId: job.upstreamId, upstreamModel: job.upstreamModel, signal: call };
    try {
      const upstream = await videos.retrieve(ref);
      answered = true;
      if (upstream.status === 'failed') {
        await this.fail(job, upstream.error?.code ?? 'video_generation_failed', upstream.error?.message ?? 'The upstream provider could not generate the video.');
      } else if (upstream.status === 'completed') {
        downloadFrom = Date.now();
        const content = await videos.content(ref);
        // The bytes have started: from here on only a silence ends the download, however big the video.
        clearTimeout(timeout);
        const stalled = (): void => call.abort(new GatewayError('upstream_timeout', `The video download sent nothing for ${this.settings.idleTimeoutMs} ms.`));
        const body = untilSilent(content.body, this.settings.idleTimeoutMs, stalled);
        const asset = await this.assets.saveStream(job.accountId, job.requestId, body, content.contentType || 'video/mp4', this.settings.maxBytes);
        // Downloaded: a failure from here on is the store's, not the upstream's.
        downloadFrom = undefined;
        const now = Date.now();
        let done = false;
        try {
          done = await this.update(job, { status: 'completed', progress: 100, assetId: asset.id, completedAt: now });
        } finally {
          // Cancelled, taken by another poll, or not recorded: this copy is nobody's.
          if (!done) await this.assets.delete(asset.id).catch(() => undefined);
        }
      } else {
        await this.update(job, { status: upstream.status, progress: Math.min(99, Math.max(job.progress, Math.round(upstream.progress))) });
      }
    } catch (err) {
      // A job cancelled meanwhile is finished with; one taken over, or whose lease may have run
      // out, is another poll's now; one cut by the gateway's close is for the next poller, not a
      // failure of its upstream.
      if (lost) return;
      if (this.stopping.aborted) await this.releaseLease(job);
      else await this.pollFailed(job, err, { answered, downloadFrom }, resumed);
    } finally {
      clearTimeout(timeout);
      stopRenewing();
      this.stopping.removeListener('abort', abort);
    }
  }

  /**
   * A job whose charge is not on record is neither delivered nor refunded: it waits for the charge
   * (committed moments after the job, or once the store is back), polled again later without a
   * failure counted. One still without it after give_up_after_ms was accepted by a gateway that
   * died before committing the charge: it is failed, with nothing to refund, and stopped upstream.
   */
  private async awaitCharge(job: LeasedJob): Promise<void> {
    const now = Date.now();
    if (now - job.createdAt <= this.settings.giveUpAfterMs) {
      await this.store.updateVideoJob(job.id, { nextPollAt: now + this.settings.pollIntervalMs, leaseOwner: null, leaseUntil: null }, IN_FLIGHT, { ifLeaseOwner: job.leaseOwner });
      return;
    }
    const failed = await this.store.updateVideoJob(
      job.id,
      {
        status: 'failed', errorCode: 'charge_not_recorded', errorMessage: 'The gateway that accepted this job stopped before its charge was recorded, so the job was not run to its end and nothing was charged.',
        updatedAt: now, completedAt: now, leaseOwner: null, leaseUntil: null,
      },
      IN_FLIGHT,
      { ifLeaseOwner: job.leaseOwner },
    );
    if (failed) {
      this.logger.warn({ video_id: job.id, request_id: job.requestId }, 'failed a video job whose charge was never recorded');
      await this.jobs.cancelUpstream(job);
    }
  }

  /** Keeps the lease of a poll under way until `until`; false once the job is no longer in flight or the lease no longer this poll's. */
  private renewLease(job: LeasedJob, until: number): Promise<boolean> {
    return this.store.updateVideoJob(job.id, { leaseUntil: until }, IN_FLIGHT, { ifLeaseOwner: job.leaseOwner });
  }

  /** Gives the lease back, the job due at once: for a poll the gateway's close cut short. */
  private async releaseLease(job: LeasedJob): Promise<void> {
    await this.store.updateVideoJob(job.id, { nextPollAt: Date.now(), leaseOwner: null, leaseUntil: null }, IN_FLIGHT, { ifLeaseOwner: job.leaseOwner });
  }

  private async pollFailed(job: LeasedJob, err: unknown, stage: PollStage, resumed: boolean): Promise<void> {
    if (err instanceof BlobTooLargeError) {
      await this.fail(job, 'video_too_large', `The finished video is over the limit of ${this.settings.maxBytes} bytes (videos.max_bytes).`);
      return;
    }
    const error = toGatewayError(err);
    // The upstream refuses to talk about the job (it does not know it): asking again will not help.
    if (error.code === 'upstream_rejected_request') {
      await this.fail(job, 'upstream_job_lost', `The upstream provider no longer knows this job: ${error.message}`);
      return;
    }
    // A download counts its run of failures up to its start, not its end: one that outlasted
    // give_up_after_ms and stalled once does not end the job, downloads that fail every time do
    // (the status check answering each time does not make them a new run).
    if (stage.downloadFrom !== undefined && this.givesUp(job, stage.downloadFrom, resumed)) {
      await this.fail(job, 'video_download_failed', `The finished video could not be downloaded from the upstream provider for ${Math.round(this.settings.giveUpAfterMs / 1000)} s: ${error.message}`);
      return;
    }
    // Once the upstream answered, a failure to record its answer is the store's, not the upstream's.
    if (!stage.answered && this.givesUp(job, Date.now(), resumed)) {
      await this.fail(job, 'upstream_unreachable', `The upstream provider could not be asked about this job for ${Math.round(this.settings.giveUpAfterMs / 1000)} s: ${error.message}`);
      return;
    }
    this.logger.warn({ err, video_id: job.id, provider: job.provider, failures: job.pollFailures + 1 }, 'could not poll a video job; trying again later');
    await this.retryLater(job, resumed);
  }

  /**
   * Whether a job was polled long after it was due: no instance polled it meanwhile (all were
   * down), so a run of failures it was in says nothing of the upstream since.
   */
  private resumed(job: VideoJobRecord): boolean {
    return Date.now() - job.nextPollAt > this.settings.leaseMs + MAX_BACKOFF_INTERVALS * this.settings.pollIntervalMs;
  }

  /**
   * Whether a failed poll ends the job: only within a run of failures that lasted longer than
   * give_up_after_ms from its first (recorded as the job's last change) to `at`; a job resumed
   * after every instance was down starts a new run, so that the gateway's own downtime never counts.
   */
  private givesUp(job: VideoJobRecord, at: number, resumed: boolean): boolean {
    return job.pollFailures > 0 && !resumed && at - job.updatedAt > this.settings.giveUpAfterMs;
  }

  /** Counts a failed poll and gives the lease back, backing off up to ten intervals so that an upstream outage is not hammered. */
  private async retryLater(job: LeasedJob, resumed: boolean): Promise<void> {
    const newRun = job.pollFailures === 0 || resumed;
    const failures = newRun ? 1 : job.pollFailures + 1;
    const backoff = this.settings.pollIntervalMs * Math.min(2 ** (failures - 1), MAX_BACKOFF_INTERVALS);
    const now = Date.now();
    await this.store.updateVideoJob(
      job.id,
      { pollFailures: failures, nextPollAt: now + backoff, leaseOwner: null, leaseUntil: null, ...(newRun ? { updatedAt: now } : {}) },
      IN_FLIGHT,
      { ifLeaseOwner: job.leaseOwner },
    );
  }

  /** Records progress and gives the lease back; false if the job changed meanwhile (cancelled, or leased by another poll). */
  private update(job: LeasedJob, changes: VideoJobChanges): Promise<boolean> {
    const now = Date.now();
    return this.store.updateVideoJob(
      job.id,
      { ...changes, updatedAt: now, pollFailures: 0, nextPollAt: now + this.settings.pollIntervalMs, leaseOwner: null, leaseUntil: null },
      IN_FLIGHT,
      { ifLeaseOwner: job.leaseOwner },
    );
  }

  private async fail(job: LeasedJob, code: string, message: string): Promise<void> {
    const now = Date.now();
    const refund = this.jobs.refundOf(job, 'failed');
    const failed = await this.store.updateVideoJob(
      job.id,
      // Shown to the caller as the job's error, outside any error envelope: scrubbed here, and
      // made storable (an upstream's code or message could otherwise fail the write on every
      // poll, leaving the job in flight and its charge never refunded).
      { status: 'failed', errorCode: storableCode(code), errorMessage: storableText(scrubSecrets(message), MAX_ERROR_MESSAGE), updatedAt: now, completedAt: now, leaseOwner: null, leaseUntil: null },
      IN_FLIGHT,
      { ifLeaseOwner: job.leaseOwner, ...(refund === undefined ? {} : { refund }) },
    );
    if (failed) this.jobs.refunded(job);
  }

  async close(): Promise<void> {
    this.stopping.abort(new GatewayError('shutting_down'));
    await this.rounds.stop();
    await Promise.all(this.polls);
  }
}

/**
 * The body as it comes; `onSilence` once the upstream takes `ms` to send a chunk. Only the wait for
 * the upstream counts, not the time the blob store takes to write a chunk (as for streams).
 */
async function* untilSilent(body: AsyncIterable<Uint8Array>, ms: number, onSilence: () => void): AsyncIterable<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      const timer = setTimeout(onSilence, ms);
      let next: IteratorResult<Uint8Array>;
      try {
        next = await chunks.next();
      } finally {
        clearTimeout(timer);
      }
      if (next.done === true) {
        finished = true;
        return;
      }
      yield next.value;
    }
  } finally {
    // Left early (a write failed, the video is too large): the upstream's body is let go.
    if (!finished) await chunks.return?.();
  }
}

/** A job as a round leased it: every write of its poll is conditional on this lease. */
type LeasedJob = VideoJobRecord & { readonly leaseOwner: string; readonly leaseUntil: number };

/** How far a failed poll got: giving up depends on which part failed. */
interface PollStage {
  /** Whether the upstream answered the status check. */
  readonly answered: boolean;
  /** When the download of the finished video began, if it did. */
  readonly downloadFrom: number | undefined;
}

const MAX_BACKOFF_INTERVALS = 10;
const MAX_ERROR_CODE = 128;
const MAX_ERROR_MESSAGE = 4_000;

/** An upstream's error code as a column of 128 characters takes it: word characters only. */
function storableCode(code: string): string {
  const cleaned = code.replace(/[^A-Za-z0-9_.:-]/g, '_').slice(0, MAX_ERROR_CODE);
  return cleaned === '' ? 'video_generation_failed' : cleaned;
}

/** Text as PostgreSQL takes it (no NUL), of a bounded length. */
function storableText(text: string, max: number): string {
  const cleaned = text.includes('\u0000') ? text.replaceAll('\u0000', '') : text;
  return cleaned.length > max ? `${cleaned.slice(0, max - 1)}…` : cleaned;
}
