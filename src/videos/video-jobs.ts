/**
 * Video jobs as the account sees them: created by the video operation once an upstream accepted
 * the job, then read, listed, cancelled and deleted here; the poller moves them along. A job of
 * another account is "not found", never "forbidden". A job that fails or is cancelled gets its
 * charge back, in the same transaction as the status that earns it.
 */
import { orderedHexAt } from '../util/ordered-id.js';
import type { Logger } from 'pino';
import { GatewayError } from '../errors/index.js';
import type { Assets } from '../assets/assets.js';
import type { CreditGate } from '../billing/types.js';
import type { ProviderAdapter, UpstreamVideoJob } from '../providers/types.js';
import { videoInFlight } from '../protocol/videos.js';
import type { ListPage, NewLedgerEntry, Store, VideoJobRecord, VideoJobStatus } from '../storage/types.js';
import { Cancellation } from '../util/cancellation.js';

const VIDEO_ID = /^video_[0-9a-f]{24}$/;
export const IN_FLIGHT: readonly VideoJobStatus[] = ['queued', 'in_progress'];
/** Bounds the memory of charges seen; forgetting one only costs a query. */
const MAX_REMEMBERED_CHARGES = 10_000;

export interface NewVideoJob {
  readonly accountId: string;
  readonly apiKeyId: string;
  readonly requestId: string;
  readonly model: string;
  readonly provider: string;
  readonly upstreamModel: string;
  readonly prompt: string;
  readonly seconds: number;
  readonly size: string;
  readonly chargedMicros: number;
  readonly upstream: UpstreamVideoJob;
}

export class VideoJobs {
  /** Jobs whose charge was seen on record. */
  private readonly charged = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly assets: Assets,
    private readonly credits: CreditGate,
    private readonly adapters: ReadonlyMap<string, ProviderAdapter>,
    private readonly pollIntervalMs: number,
    private readonly logger: Logger,
  ) {}

  /** Records a job an upstream accepted; it is polled from `nextPollAt` on. */
  async record(job: NewVideoJob): Promise<VideoJobRecord> {
    const now = Date.now();
    const record: VideoJobRecord = {
      id: `video_${orderedHexAt(now)}`,
      accountId: job.accountId,
      apiKeyId: job.apiKeyId,
      requestId: job.requestId,
      model: job.model,
      provider: job.provider,
      upstreamModel: job.upstreamModel,
      upstreamId: job.upstream.id,
      status: job.upstream.status === 'completed' || job.upstream.status === 'failed' ? 'in_progress' : job.upstream.status,
      progress: Math.min(99, Math.max(0, Math.round(job.upstream.progress))),
      prompt: job.prompt,
      seconds: job.seconds,
      size: job.size,
      chargedMicros: job.chargedMicros,
      errorCode: null,
      errorMessage: null,
      assetId: null,
      createdAt: now,
      updatedAt: now,
      completedAt: null,
      // Even an upstream that finished at once is polled, so that its video is fetched the usual way.
      nextPollAt: job.upstream.status === 'completed' || job.upstream.status === 'failed' ? now : now + this.pollIntervalMs,
      pollFailures: 0,
      leaseOwner: null,
      leaseUntil: null,
    };
    try {
      await this.store.putVideoJob(record);
    } catch (err) {
      // Unrecorded, the job would never be polled, charged or refunded, and the caller's retry
      // would start a second one: the upstream is told to stop it.
      this.logger.error({ err, provider: job.provider, upstream_id: job.upstream.id }, 'could not record a video job an upstream accepted; cancelling it upstream');
      await this.cancelUpstream(record);
      throw err;
    }
    return record;
  }

  async find(accountId: string, id: string): Promise<VideoJobRecord> {
    const job = VIDEO_ID.test(id) ? await this.store.getVideoJob(id) : undefined;
    if (job === undefined || job.accountId !== accountId) throw new GatewayError('video_not_found', `No video job has the id "${id.slice(0, 64)}".`, { param: 'video_id' });
    return job;
  }

  /** The job whose id a recorded creation answered with, if it is still in flight (any account: the record is the caller's own). */
  async inFlight(id: string): Promise<VideoJobRecord | undefined> {
    const job = VIDEO_ID.test(id) ? await this.store.getVideoJob(id) : undefined;
    return job !== undefined && videoInFlight(job.status) ? job : undefined;
  }

  list(accountId: string, page: ListPage): Promise<VideoJobRecord[]> {
    return this.store.listVideoJobs(accountId, page);
  }

  /** Cancels a job still in flight (409 once it finished), refunds it, and tells the upstream. */
  async cancel(accountId: string, id: string): Promise<VideoJobRecord> {
    const job = await this.find(accountId, id);
    if (videoInFlight(job.status) && !(await this.chargeOnRecord(job))) {
      // A refund now would give back a charge that may never land; once it does, the cancel refunds it.
      throw new GatewayError('store_unavailable', `The charge of video job ${id} is not recorded yet; retry the cancel shortly.`, { retryAfterSeconds: 1 });
    }
    const now = Date.now();
    const cancelled = await this.store.updateVideoJob(
      job.id,
      { status: 'cancelled', updatedAt: now, completedAt: now, leaseOwner: null, leaseUntil: null },
      IN_FLIGHT,
      { refund: this.refundOf(job, 'cancelled') },
    );
    if (!cancelled) {
      const now = await this.find(accountId, id);
      throw new GatewayError('video_job_finished', `The video job ${id} is already ${now.status}; only a queued or in-progress job can be cancelled.`, { param: 'video_id' });
    }
    this.refunded(job);
    void this.cancelUpstream(job);
    return this.find(accountId, id);
  }

  /** Deletes a finished job and its video; 409 while it is still in flight. */
  async delete(accountId: string, id: string): Promise<void> {
    const job = await this.find(accountId, id);
    if (videoInFlight(job.status)) {
      // As the resend and the download of a job in flight say: look again in a few seconds.
      throw new GatewayError('video_job_in_progress', `The video job ${id} is still ${job.status}; cancel it first, or wait until it finishes.`, { param: 'video_id', retryAfterSeconds: 5 });
    }
    await this.store.deleteVideoJob(job.id);
    if (job.assetId !== null) await this.assets.delete(job.assetId);
  }

  /**
   * Whether the job's charge is committed, or it has none. The job is recorded in a transaction of
   * its own just before its charge is, so for a moment (longer while the store is unreachable, for
   * ever if the gateway that accepted it died in between) a job may exist whose charge does not:
   * nothing may be refunded or delivered on its account until the charge is on record.
   */
  async chargeOnRecord(job: VideoJobRecord): Promise<boolean> {
    if (job.chargedMicros <= 0 || this.charged.has(job.id)) return true;
    if ((await this.store.findLedgerEntry(job.requestId, 'charge')) === undefined) return false;
    // A charge never goes away: remembered, so that later polls need not ask again.
    if (this.charged.size >= MAX_REMEMBERED_CHARGES) this.charged.clear();
    this.charged.add(job.id);
    return true;
  }

  /** The ledger entry that gives a failed or cancelled job's charge back, if it was charged. */
  refundOf(job: VideoJobRecord, why: 'failed' | 'cancelled'): NewLedgerEntry | undefined {
    if (job.chargedMicros <= 0) return undefined;
    return { accountId: job.accountId, kind: 'refund', amountMicros: job.chargedMicros, requestId: job.requestId, apiKeyId: job.apiKeyId, note: `video job ${job.id} ${why}` };
  }

  /** Tells the credit gate about a refund just committed. */
  refunded(job: VideoJobRecord): void {
    if (job.chargedMicros > 0) this.credits.balanceMoved(job.accountId, job.chargedMicros);
  }

  /** Tells the upstream to stop a job this gateway will not see through (a failure is logged, not thrown). */
  async cancelUpstream(job: VideoJobRecord): Promise<void> {
    const videos = this.adapters.get(job.provider)?.videos;
    if (videos === undefined) return;
    try {
      await videos.cancel({ upstreamId: job.upstreamId, upstreamModel: job.upstreamModel, signal: new Cancellation() });
    } catch (err) {
      this.logger.warn({ err, video_id: job.id, provider: job.provider }, 'could not cancel a video job upstream');
    }
  }
}
