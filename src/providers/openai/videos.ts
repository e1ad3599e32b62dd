/**
 * Video generation as jobs over OpenAI's wire format: POST {base}/videos (multipart, as the openai
 * SDK sends it, with the reference image or video as a file part), then GET /videos/{id} to poll,
 * GET /videos/{id}/content for the MP4 and DELETE /videos/{id}. OpenAI cannot stop a running job,
 * so cancelling deletes it: the best the API offers.
 */
import type { VideoError } from '../../protocol/videos.js';
import { GatewayError } from '../../errors/index.js';
import type { CancelSignal } from '../../util/cancellation.js';
import type { UpstreamVideoJob, VideoCall, VideoContent, VideoJobRef, VideoJobs } from '../types.js';
import { UpstreamClient, discardBody, headerValue, readBodyText, relayBody, type UpstreamResponse } from '../upstream/upstream-client.js';
import { errorDetail, malformed, redact, reportedError, statusError } from './errors.js';
import { multipartBody, multipartHeaders, type FormPart } from './multipart-body.js';

export const VIDEOS_PATH = '/videos';
/** What the openai SDK asks for when downloading content. */
const CONTENT_ACCEPT = 'application/binary';
const UPSTREAM_STATUSES: ReadonlySet<string> = new Set(['queued', 'in_progress', 'completed', 'failed']);

export interface OpenAIVideoUpstream {
  readonly client: UpstreamClient;
  readonly providerId: string;
  /** Only to scrub it from relayed upstream messages. */
  readonly apiKey: string | undefined;
  /** The provider's own headers (authorization, the operator's); content headers are added per request. */
  readonly headers: Record<string, string>;
}

export function createOpenAIVideoJobs(upstream: OpenAIVideoUpstream): VideoJobs {
  const { client, providerId, apiKey } = upstream;
  // Built once: GET and DELETE carry no body, so no content-type.
  const jsonHeaders = { accept: 'application/json', ...upstream.headers };
  const formBaseHeaders = UpstreamClient.headers(upstream.headers);
  const contentHeaders = { accept: CONTENT_ACCEPT, ...upstream.headers };

  async function checked(res: UpstreamResponse, signal: CancelSignal): Promise<UpstreamResponse> {
    if (res.status < 200 || res.status >= 300) throw await statusError(providerId, apiKey, res, signal);
    return res;
  }

  async function job(res: UpstreamResponse, signal: CancelSignal): Promise<UpstreamVideoJob> {
    return videoJob(providerId, apiKey, await readBodyText(await checked(res, signal), signal));
  }

  return {
    async create(call: VideoCall): Promise<UpstreamVideoJob> {
      const form = multipartBody(videoForm(call));
      return job(await client.postStream(VIDEOS_PATH, form.body, multipartHeaders(formBaseHeaders, form), call.signal), call.signal);
    },

    async retrieve(ref: VideoJobRef): Promise<UpstreamVideoJob> {
      const res = await client.get(videoPath(ref.upstreamId), jsonHeaders, ref.signal);
      // The contract's way to say "this job is gone" (deleted or expired upstream): polling stops.
      if (res.status === 404) {
        discardBody(res);
        throw new GatewayError('upstream_rejected_request', `Provider "${providerId}" no longer knows the video job (upstream status 404).`);
      }
      return job(res, ref.signal);
    },

    async content(ref: VideoJobRef): Promise<VideoContent> {
      const res = await checked(await client.get(`${videoPath(ref.upstreamId)}/content`, contentHeaders, ref.signal), ref.signal);
      return { contentType: headerValue(res.headers, 'content-type') ?? 'video/mp4', body: relayBody(res, ref.signal) };
    },

    async cancel(ref: VideoJobRef): Promise<void> {
      const res = await client.delete(videoPath(ref.upstreamId), jsonHeaders, ref.signal);
      // Gone already (404), or in a state the upstream will not delete (409): nothing left to stop.
      if ((res.status >= 200 && res.status < 300) || res.status === 404 || res.status === 409) {
        discardBody(res);
        return;
      }
      throw await statusError(providerId, apiKey, res, ref.signal);
    },
  };
}

/** The fields in the SDK's order; `seconds` and `size` only when the caller chose them. */
function videoForm(call: VideoCall): FormPart[] {
  const { prompt, seconds, size } = call.request;
  const parts: FormPart[] = [
    { name: 'prompt', value: prompt },
    { name: 'model', value: call.upstreamModel },
  ];
  if (seconds !== undefined) parts.push({ name: 'seconds', value: seconds });
  if (size !== undefined) parts.push({ name: 'size', value: size });
  if (call.reference !== undefined) parts.push({ name: 'input_reference', file: call.reference });
  return parts;
}

/** An id is the upstream's text: encoded, so that it can only ever name one job. */
function videoPath(upstreamId: string): string {
  return `${VIDEOS_PATH}/${encodeURIComponent(upstreamId)}`;
}

interface VideoJson {
  id?: unknown;
  status?: unknown;
  progress?: unknown;
  error?: unknown;
}

export function videoJob(providerId: string, apiKey: string | undefined, text: string): UpstreamVideoJob {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw malformed(providerId, 'a video job that is not valid JSON', err);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw malformed(providerId, 'a video job that is not a JSON object');
  const video = parsed as VideoJson;
  if (typeof video.id !== 'string' || !usableId(video.id)) {
    // An error body under a 2xx status (some proxies): its message beats "malformed".
    if (typeof video.error === 'object' && video.error !== null) throw reportedError(providerId, apiKey, errorDetail(video));
    throw malformed(providerId, 'a video job without a usable id');
  }
  if (typeof video.status !== 'string' || !UPSTREAM_STATUSES.has(video.status)) {
    throw malformed(providerId, `a video job with the unknown status ${JSON.stringify(video.status ?? null)}`);
  }
  const status = video.status as UpstreamVideoJob['status'];
  const progress = typeof video.progress === 'number' && Number.isFinite(video.progress) ? Math.min(100, Math.max(0, video.progress)) : status === 'completed' ? 100 : 0;
  const error = videoError(video.error, apiKey);
  return error === undefined ? { id: video.id, status, progress } : { id: video.id, status, progress, error };
}

/** "." and ".." would be path steps, not ids, however encoded. */
function usableId(id: string): boolean {
  return id !== '' && id !== '.' && id !== '..';
}

function videoError(value: unknown, apiKey: string | undefined): VideoError | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { code, message } = value as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : 'The upstream did not say why the video failed.';
  // The job's error reaches the caller as is: a credential echoed in it must not.
  return { code: typeof code === 'string' ? code : 'video_generation_failed', message: redact(text, apiKey) ?? text };
}
