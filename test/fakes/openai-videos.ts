/**
 * OpenAI's video jobs for the fake server: POST /v1/videos (multipart as the SDK sends it, or
 * JSON) creates a `video` object; each later GET advances it (queued, then in_progress with
 * rising progress, then completed, or failed when told so), so tests can poll it through its
 * whole life; GET /content answers MP4 bytes once completed; DELETE removes it. Jobs live in
 * memory, per fake server.
 */
import { randomBytes } from 'node:crypto';
import { openAIError, type FakeAnswer } from './fake-answer.js';
import { formField, isFakeForm } from './multipart-form.js';

export interface FakeVideoSettings {
  /** GETs of a job until it is finished; the ones before show it in_progress. Default 2. */
  pollsToComplete: number;
  /** When set, jobs end `failed` with this error instead of `completed`. */
  failWith?: { code: string; message: string };
}

export interface FakeVideo {
  id: string;
  object: 'video';
  model: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  progress: number;
  prompt: string;
  seconds: string;
  size: string;
  created_at: number;
  completed_at: number | null;
  expires_at: number | null;
  error: { code: string; message: string } | null;
  remixed_from_video_id: string | null;
}

/** A minimal MP4: an `ftyp` box and an empty `mdat` box. */
export const FAKE_MP4 = Buffer.from([
  0x00, 0x00, 0x00, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0x00, 0x00, 0x02, 0x00, 0x69, 0x73, 0x6f, 0x6d, 0x6d, 0x70, 0x34, 0x31,
  0x00, 0x00, 0x00, 0x08, 0x6d, 0x64, 0x61, 0x74,
]);

const SECONDS = ['4', '8', '12'];
const SIZES = ['720x1280', '1280x720', '1024x1792', '1792x1024'];
const DEFAULT_SETTINGS: FakeVideoSettings = { pollsToComplete: 2 };
const EXPIRY_SECONDS = 3600;

export class FakeVideoJobs {
  private settings: FakeVideoSettings = { ...DEFAULT_SETTINGS };
  /** Every job created and not deleted, by id. */
  readonly jobs = new Map<string, FakeVideo>();
  private readonly polls = new Map<string, number>();

  configure(settings: Partial<FakeVideoSettings>): void {
    this.settings = { ...this.settings, ...settings };
  }

  reset(): void {
    this.settings = { ...DEFAULT_SETTINGS };
    this.jobs.clear();
    this.polls.clear();
  }

  create(parsed: unknown): FakeAnswer {
    const fields = createFields(parsed);
    if (fields === undefined) return openAIError(400, 'We could not parse the body of your request.');
    if (fields.prompt === undefined || fields.prompt === '') return openAIError(400, "Missing required parameter: 'prompt'.", 'prompt', 'missing_required_parameter');
    const seconds = fields.seconds ?? '4';
    if (!SECONDS.includes(seconds)) return openAIError(400, `Invalid value: '${seconds}'. Supported values are: '4', '8', and '12'.`, 'seconds', 'invalid_value');
    const size = fields.size ?? '720x1280';
    if (!SIZES.includes(size)) {
      return openAIError(400, `Invalid value: '${size}'. Supported values are: '720x1280', '1280x720', '1024x1792', and '1792x1024'.`, 'size', 'invalid_value');
    }
    const video: FakeVideo = {
      id: `video_${randomBytes(16).toString('hex')}`,
      object: 'video',
      model: fields.model ?? 'sora-2',
      status: 'queued',
      progress: 0,
      prompt: fields.prompt,
      seconds,
      size,
      created_at: Math.floor(Date.now() / 1000),
      completed_at: null,
      expires_at: null,
      error: null,
      remixed_from_video_id: null,
    };
    this.jobs.set(video.id, video);
    this.polls.set(video.id, 0);
    return { status: 200, json: video };
  }

  retrieve(id: string): FakeAnswer {
    const video = this.jobs.get(id);
    if (video === undefined) return notFound(id);
    if (video.status === 'queued' || video.status === 'in_progress') this.advance(video);
    return { status: 200, json: video };
  }

  content(id: string): FakeAnswer {
    const video = this.jobs.get(id);
    if (video === undefined) return notFound(id);
    if (video.status !== 'completed') return openAIError(404, `Video '${id}' is not ready: its status is ${video.status}.`, null, 'video_not_ready');
    return { status: 200, contentType: 'video/mp4', chunks: [FAKE_MP4.subarray(0, 16), FAKE_MP4.subarray(16)] };
  }

  remove(id: string): FakeAnswer {
    if (!this.jobs.delete(id)) return notFound(id);
    this.polls.delete(id);
    return { status: 200, json: { id, object: 'video.deleted', deleted: true } };
  }

  private advance(video: FakeVideo): void {
    const polls = (this.polls.get(video.id) ?? 0) + 1;
    this.polls.set(video.id, polls);
    const { pollsToComplete, failWith } = this.settings;
    if (polls < pollsToComplete) {
      video.status = 'in_progress';
      video.progress = Math.floor((100 * polls) / pollsToComplete);
      return;
    }
    const now = Math.floor(Date.now() / 1000);
    if (failWith !== undefined) {
      video.status = 'failed';
      video.error = { ...failWith };
      return;
    }
    video.status = 'completed';
    video.progress = 100;
    video.completed_at = now;
    video.expires_at = now + EXPIRY_SECONDS;
  }
}

interface CreateFields {
  prompt?: string;
  model?: string;
  seconds?: string;
  size?: string;
}

/** The create fields from a multipart form (what the SDK sends) or a JSON body. */
function createFields(parsed: unknown): CreateFields | undefined {
  if (isFakeForm(parsed)) {
    const fields: CreateFields = {};
    for (const name of ['prompt', 'model', 'seconds', 'size'] as const) {
      const value = formField(parsed, name);
      if (value !== undefined) fields[name] = value;
    }
    return fields;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const body = parsed as Record<string, unknown>;
  const fields: CreateFields = {};
  for (const name of ['prompt', 'model', 'seconds', 'size'] as const) {
    const value = body[name];
    if (typeof value === 'string') fields[name] = value;
  }
  return fields;
}

function notFound(id: string): FakeAnswer {
  return openAIError(404, `Video with id '${id}' not found.`, null, 'video_not_found');
}
