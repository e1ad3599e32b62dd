/** The OpenAI video wire types (POST /v1/videos and friends), plus Tollgate's `cancelled` status. */

export const VIDEO_STATUSES = ['queued', 'in_progress', 'completed', 'failed', 'cancelled'] as const;
export type VideoStatus = (typeof VIDEO_STATUSES)[number];

/** Whether a job in this status can still change. */
export function videoInFlight(status: VideoStatus): boolean {
  return status === 'queued' || status === 'in_progress';
}

export interface VideoCreateRequest {
  model: string;
  prompt: string;
  /** Clip length in seconds, as a string on OpenAI's wire ("4", "8", "12"); default 4. */
  seconds?: string;
  /** `WIDTHxHEIGHT`; default 720x1280. */
  size?: string;
}

export const DEFAULT_VIDEO_SECONDS = 4;
export const DEFAULT_VIDEO_SIZE = '720x1280';
export const MAX_VIDEO_SECONDS = 60;

export interface VideoError {
  code: string;
  message: string;
}

/** The job as OpenAI's API shows it (`object: "video"`). */
export interface VideoObject {
  id: string;
  object: 'video';
  model: string;
  status: VideoStatus;
  progress: number;
  prompt: string | null;
  seconds: string;
  size: string;
  created_at: number;
  completed_at: number | null;
  expires_at: number | null;
  error: VideoError | null;
  remixed_from_video_id: string | null;
  /** Tollgate's addition: the asset holding the finished video, once `completed`. */
  asset_id?: string | null;
}
