/** A video job as callers see it: OpenAI's Video object, plus `cancelled` and the asset of the finished video. */
import type { VideoObject } from '../protocol/videos.js';
import type { VideoJobRecord } from '../storage/types.js';

const seconds = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms / 1000));

export function videoView(job: VideoJobRecord, assetExpiresAt: number | null): VideoObject {
  return {
    id: job.id,
    object: 'video',
    model: job.model,
    status: job.status,
    progress: job.progress,
    prompt: job.prompt,
    seconds: String(job.seconds),
    size: job.size,
    created_at: seconds(job.createdAt) ?? 0,
    completed_at: seconds(job.completedAt),
    expires_at: seconds(assetExpiresAt),
    error: job.errorCode === null ? null : { code: job.errorCode, message: job.errorMessage ?? '' },
    remixed_from_video_id: null,
    asset_id: job.assetId,
  };
}
