/**
 * The parts behind files and jobs: one blob store shared by generated assets and uploads, the
 * uploaded files, the video jobs and their poller. Opened and closed together by the gateway.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { parseSize } from '../config/size.js';
import { Assets } from '../assets/assets.js';
import { Files } from '../uploads/files.js';
import { ContentTypeFilter } from '../uploads/content-types.js';
import { VideoJobs } from '../videos/video-jobs.js';
import { VideoPoller } from '../videos/video-poller.js';
import { openBlobStore } from '../storage/blobs/open-blob-store.js';
import type { CreditGate } from '../billing/types.js';
import type { ProviderAdapter } from '../providers/types.js';
import type { Store } from '../storage/types.js';

export interface Media {
  readonly assets: Assets;
  readonly files: Files;
  readonly contentTypes: ContentTypeFilter;
  readonly videos: VideoJobs;
  readonly poller: VideoPoller;
  /** The poller first (it writes assets), then the rest. */
  close(): Promise<void>;
}

/**
 * With PostgreSQL storage the gateway may run as several instances, and blobs on one instance's
 * disk are then missing on the others (an asset link or an uploaded file answered by another
 * instance is not found). One instance on PostgreSQL is fine, so this warns instead of refusing.
 */
export function localBlobsWarning(config: Config): string | null {
  if (config.blobs.backend !== 'local' || config.storage.url.startsWith('sqlite://')) return null;
  return 'blobs.backend is local while storage is PostgreSQL: generated assets and uploaded files stay on this instance\'s disk, and other instances cannot serve them; set blobs.backend to postgres when running several instances';
}

export async function openMedia(config: Config, store: Store, credits: CreditGate, adapters: ReadonlyMap<string, ProviderAdapter>, logger: Logger): Promise<Media> {
  const warning = localBlobsWarning(config);
  if (warning !== null) logger.warn(warning);
  const assets = new Assets(store, await openBlobStore(config, logger), config.blobs.retention_ms, logger);
  const files = new Files(
    store,
    assets.blobs,
    { maxBytes: parseSize(config.uploads.max_bytes), retentionMs: config.uploads.retention_ms ?? config.blobs.retention_ms, idleTimeoutMs: config.server.body_idle_timeout_ms },
    logger,
  );
  const videos = new VideoJobs(store, assets, credits, adapters, config.videos.poll_interval_ms, logger);
  const poller = new VideoPoller(
    store,
    videos,
    assets,
    adapters,
    {
      pollIntervalMs: config.videos.poll_interval_ms,
      leaseMs: config.videos.lease_ms,
      maxBytes: parseSize(config.videos.max_bytes),
      giveUpAfterMs: config.videos.give_up_after_ms,
      callTimeoutMs: config.upstream.timeout_ms,
      idleTimeoutMs: config.upstream.idle_timeout_ms,
    },
    logger,
  );
  return {
    assets,
    files,
    contentTypes: new ContentTypeFilter(config.uploads.content_types),
    videos,
    poller,
    async close() {
      await poller.close();
      await files.close();
      await assets.close();
    },
  };
}
