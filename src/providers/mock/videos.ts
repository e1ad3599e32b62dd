/**
 * The mock's video jobs, kept nowhere: the upstream id carries everything a job is (when it was
 * made, how long it takes, its length and size, whether it will fail), so retrieve and content
 * work from the id and the clock alone, and jobs survive a gateway restart just as jobs at a real
 * provider do. For the same reason cancel has nothing to stop: Tollgate marks the job cancelled
 * on its side and never asks the mock about it again.
 */
import { Readable } from 'node:stream';
import { GatewayError } from '../../errors/index.js';
import type { MockOptions } from '../../config/schema.js';
import { DEFAULT_VIDEO_SECONDS, DEFAULT_VIDEO_SIZE, MAX_VIDEO_SECONDS } from '../../protocol/videos.js';
import type { UpstreamVideoJob, VideoCall, VideoContent, VideoJobRef, VideoJobs } from '../types.js';
import { upstreamFault } from '../upstream/upstream-faults.js';
import { tinyMp4 } from './mp4.js';

const MAX_SIDE = 1920;
/** The first tenth of a job's time it is queued, as a real provider's job waits for a worker. */
const QUEUED_SHARE = 0.1;
const ID_PATTERN = /^mockvid_([0-9a-z]+)_([0-9a-z]+)_(\d+)_(\d+)x(\d+)_([fc])$/;

interface MockVideoJob {
  readonly createdAtMs: number;
  readonly durationMs: number;
  readonly seconds: number;
  readonly width: number;
  readonly height: number;
  readonly willFail: boolean;
}

function mockVideoId(job: MockVideoJob): string {
  return `mockvid_${job.createdAtMs.toString(36)}_${job.durationMs.toString(36)}_${job.seconds}_${job.width}x${job.height}_${job.willFail ? 'f' : 'c'}`;
}

function parseVideoId(id: string): MockVideoJob {
  const match = ID_PATTERN.exec(id);
  if (!match) throw new GatewayError('upstream_rejected_request', `The upstream provider rejected the request: no video job has the id "${id}" (404).`);
  const [, created, duration, seconds, width, height, outcome] = match;
  return {
    createdAtMs: parseInt(created!, 36),
    durationMs: parseInt(duration!, 36),
    seconds: Number(seconds),
    width: Number(width),
    height: Number(height),
    willFail: outcome === 'f',
  };
}

function parseSize(size: string): { width: number; height: number } {
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(size);
  const [width, height] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
  // Even sides only: the mock's H.264 is 4:2:0, whose picture is cropped in steps of two pixels.
  const fits = (side: number): boolean => side >= 2 && side <= MAX_SIDE && side % 2 === 0;
  if (!fits(width) || !fits(height)) {
    throw new GatewayError('upstream_rejected_request', `The mock provider makes videos of even WIDTHxHEIGHT up to ${MAX_SIDE}x${MAX_SIDE}; size is "${size}".`, { param: 'size' });
  }
  return { width, height };
}

function parseSeconds(seconds: string): number {
  const value = /^\d{1,3}$/.test(seconds) ? Number(seconds) : NaN;
  if (!(value >= 1 && value <= MAX_VIDEO_SECONDS)) {
    throw new GatewayError('upstream_rejected_request', `The mock provider makes videos of 1 to ${MAX_VIDEO_SECONDS} whole seconds; seconds is "${seconds}".`, { param: 'seconds' });
  }
  return value;
}

/** Where a job is, from how long ago it was made. */
function jobState(id: string, job: MockVideoJob, now: number): UpstreamVideoJob {
  const elapsed = now - job.createdAtMs;
  if (elapsed < job.durationMs * QUEUED_SHARE) return { id, status: 'queued', progress: 0 };
  if (elapsed < job.durationMs) {
    return { id, status: 'in_progress', progress: Math.min(99, Math.max(1, Math.floor((elapsed / job.durationMs) * 100))) };
  }
  if (job.willFail) {
    return { id, status: 'failed', progress: 100, error: { code: 'mock_failure', message: 'The mock provider is configured to fail video jobs (mock.video_fail).' } };
  }
  return { id, status: 'completed', progress: 100 };
}

async function readToEnd(call: VideoCall): Promise<void> {
  if (call.reference === undefined) return;
  const stream = await call.reference.open();
  for await (const _piece of stream) {
    if (call.signal.aborted) throw upstreamFault(call.signal.reason, call.signal);
  }
}

/** Runs synchronous work as a promise, so that a throw becomes a rejection as the interface says. */
function settle<T>(work: () => T): Promise<T> {
  return new Promise((resolve) => resolve(work()));
}

export function mockVideoJobs(options: Pick<MockOptions, 'video_ms' | 'video_fail'>): VideoJobs {
  return {
    async create(call: VideoCall): Promise<UpstreamVideoJob> {
      const { width, height } = parseSize(call.request.size ?? DEFAULT_VIDEO_SIZE);
      const seconds = parseSeconds(call.request.seconds ?? String(DEFAULT_VIDEO_SECONDS));
      // The mock does nothing with the reference, but reads it as a real upstream would upload it.
      await readToEnd(call);
      const job: MockVideoJob = { createdAtMs: Date.now(), durationMs: options.video_ms, seconds, width, height, willFail: options.video_fail };
      const id = mockVideoId(job);
      return jobState(id, job, job.createdAtMs);
    },

    retrieve(ref: VideoJobRef): Promise<UpstreamVideoJob> {
      return settle(() => jobState(ref.upstreamId, parseVideoId(ref.upstreamId), Date.now()));
    },

    content(ref: VideoJobRef): Promise<VideoContent> {
      return settle(() => {
        const job = parseVideoId(ref.upstreamId);
        const state = jobState(ref.upstreamId, job, Date.now());
        if (state.status !== 'completed') {
          throw new GatewayError('upstream_rejected_request', `The upstream provider rejected the request: video job "${ref.upstreamId}" is ${state.status}, not completed.`);
        }
        return { contentType: 'video/mp4', body: Readable.from([tinyMp4(job.seconds, job.width, job.height)]) };
      });
    },

    cancel(): Promise<void> {
      return Promise.resolve();
    },
  };
}
