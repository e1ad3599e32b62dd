/**
 * Moves video jobs along: every `poll_interval_ms` this instance leases the jobs whose next poll
 * is due (no other instance polls them meanwhile), asks their upstream how they are, and records
 * the answer. A finished video is streamed into an asset before the job says `completed`; a job
 * that failed upstream is refunded. Because the state lives in the store, a restarted gateway
 * (or another instance, once the lease expires) simply carries on polling.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { GatewayError, toGatewayError } from '../errors/index.js';
import type { Assets } from '../assets/assets.js';
import type { ProviderAdapter, VideoJobRef } from '../providers/types.js';
import type { Store, VideoJobChanges, VideoJobRecord } from '../storage/types.js';
import { BlobTooLargeError } from '../storage/blobs/types.js';
import { Cancellation } from '../util/cancellation.js';
import { IN_FLIGHT, type VideoJobs } from './video-jobs.js';
import { PeriodicTask } from '../util/periodic-task.js';

export interface PollerSettings {
  readonly pollIntervalMs: number;
  readonly leaseMs: number;
  readonly maxBytes: number;
  readonly giveUpAfterMs: number;
  /** One poll's (or one download's) time limit. */
  readonly callTimeoutMs: number;
}

const BATCH = 20;

export class VideoPoller {
  /** This instance's name on the leases it holds. */
  readonly owner = `poller_${randomBytes(8).toString('hex')}`;
  private readonly rounds: PeriodicTask;
  private readonly stopping = new Cancellation();

  constructor(
    private readonly store: Store,
    private readonly jobs: VideoJobs,
    private readonly assets: Assets,
    private readonly adapters: ReadonlyMap<string, ProviderAdapter>,
    private readonly settings: PollerSettings,
    private readonly logger: Logger,
  ) {
    this.rounds = new PeriodicTask(() => this.pollDue(), settings.pollIntervalMs, (err) => this.logger.warn({ err }, 'could not poll video jobs; trying again next round'));
  }

  /** One round now: polls every due job (in batches) once. Rounds never overlap. */
  tick(): Promise<void> {
    return this.rounds.run();
  }

  private async pollDue(): Promise<void> {
    for (;;) {
      if (this.stopping.aborted) return;
      const due = await this.store.leaseDueVideoJobs(this.owner, Date.now(), this.settings.leaseMs, BATCH);
      await Promise.all(due.map((job) => this.poll(job)));
      if (due.length < BATCH) return;
    }
  }

  private async poll(job: VideoJobRecord): Promise<void> {
    const videos = this.adapters.get(job.provider)?.videos;
    if (videos === undefined) {
      await this.fail(job, 'provider_unavailable', `The provider "${job.provider}" of this job is no longer configured for video.`);
      return;
    }
    const call = new Cancellation();
    const abort = (): void => call.abort(new GatewayError('upstream_timeout', 'The video poll took too long.'));
    const timeout = setTimeout(abort, this.settings.callTimeoutMs);
    this.stopping.once('abort', abort);
    const ref: VideoJobRef = { upstreamId: job.upstreamId, upstreamModel: job.upstreamModel, signal: call };
    try {
      const upstream = await videos.retrieve(ref);
      if (upstream.status === 'failed') {
        await this.fail(job, upstream.error?.code ?? 'video_generation_failed', upstream.error?.message ?? 'The upstream provider could not generate the video.');
      } else if (upstream.status === 'completed') {
        const content = await videos.content(ref);
        const asset = await this.assets.saveStream(job.accountId, job.requestId, content.body, content.contentType || 'video/mp4', this.settings.maxBytes);
        const now = Date.now();
        const done = await this.update(job, { status: 'completed', progress: 100, assetId: asset.id, completedAt: now });
        // Cancelled while it downloaded: the video is nobody's.
        if (!done) await this.assets.delete(asset.id);
      } else {
        await this.update(job, { status: upstream.status, progress: Math.min(99, Math.max(job.progress, Math.round(upstream.progress))) });
      }
    } catch (err) {
      await this.pollFailed(job, err);
    } finally {
      clearTimeout(timeout);
      this.stopping.removeListener('abort', abort);
    }
  }

  private async pollFailed(job: VideoJobRecord, err: unknown): Promise<void> {
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
    const failures = job.pollFailures + 1;
    if (Date.now() - job.updatedAt > this.settings.giveUpAfterMs) {
      await this.fail(job, 'upstream_unreachable', `The upstream provider could not be asked about this job for ${Math.round(this.settings.giveUpAfterMs / 1000)} s: ${error.message}`);
      return;
    }
    this.logger.warn({ err, video_id: job.id, provider: job.provider, failures }, 'could not poll a video job; trying again later');
    // Backs off up to ten intervals, so that an upstream outage is not hammered.
    const backoff = this.settings.pollIntervalMs * Math.min(2 ** (failures - 1), 10);
    await this.store.updateVideoJob(job.id, { pollFailures: failures, nextPollAt: Date.now() + backoff, leaseOwner: null, leaseUntil: null }, IN_FLIGHT, { ifLeaseOwner: this.owner });
  }

  /** Records progress and gives the lease back; false if the job changed meanwhile (cancelled). */
  private update(job: VideoJobRecord, changes: VideoJobChanges): Promise<boolean> {
    const now = Date.now();
    return this.store.updateVideoJob(
      job.id,
      { ...changes, updatedAt: now, pollFailures: 0, nextPollAt: now + this.settings.pollIntervalMs, leaseOwner: null, leaseUntil: null },
      IN_FLIGHT,
      { ifLeaseOwner: this.owner },
    );
  }

  private async fail(job: VideoJobRecord, code: string, message: string): Promise<void> {
    const now = Date.now();
    const refund = this.jobs.refundOf(job, 'failed');
    const failed = await this.store.updateVideoJob(
      job.id,
      { status: 'failed', errorCode: code, errorMessage: message, updatedAt: now, completedAt: now, leaseOwner: null, leaseUntil: null },
      IN_FLIGHT,
      { ifLeaseOwner: this.owner, ...(refund === undefined ? {} : { refund }) },
    );
    if (failed) this.jobs.refunded(job);
  }

  async close(): Promise<void> {
    this.stopping.abort(new GatewayError('shutting_down'));
    await this.rounds.stop();
  }
}
