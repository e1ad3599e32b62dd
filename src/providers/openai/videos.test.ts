import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bytesFile, stalledFile } from '../../../test/fakes/input-files.js';
import { formFile, type FakeForm } from '../../../test/fakes/multipart-form.js';
import { FAKE_OPENAI_KEY, startFakeOpenAI, type FakeOpenAI } from '../../../test/fakes/openai-server.js';
import { FAKE_MP4 } from '../../../test/fakes/openai-videos.js';
import { listenLocal } from '../../../test/support/local-server.js';
import type { ProviderConfig } from '../../config/schema.js';
import { GatewayError } from '../../errors/index.js';
import type { VideoCreateRequest } from '../../protocol/videos.js';
import { Cancellation, type CancelSignal } from '../../util/cancellation.js';
import type { InputFile, ProviderAdapter, VideoCall, VideoJobRef, VideoJobs } from '../types.js';
import { createOpenAIAdapter } from './adapter.js';

const UPSTREAM_MODEL = 'sora-2-2025-10-06';
const PROMPT = 'A calico cat playing a piano on stage';
const REFERENCE = Buffer.from(Array.from({ length: 30_000 }, (_, i) => (i * 17) & 0xff));

function providerConfig(baseUrl: string, overrides: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    id: 'openai-main',
    kind: 'openai',
    base_url: baseUrl,
    api_key: FAKE_OPENAI_KEY,
    headers: {},
    max_connections: 4,
    anthropic_version: '2023-06-01',
    output_cap_field: 'max_completion_tokens',
    ...overrides,
  };
}

function videoCall(request: Partial<VideoCreateRequest> = {}, options: { reference?: InputFile; signal?: CancelSignal } = {}): VideoCall {
  return {
    request: { model: 'public-video', prompt: PROMPT, ...request },
    ...(options.reference === undefined ? {} : { reference: options.reference }),
    upstreamModel: UPSTREAM_MODEL,
    signal: options.signal ?? new Cancellation().signal,
    requestId: 'req-test',
  };
}

function ref(upstreamId: string, signal: CancelSignal = new Cancellation().signal): VideoJobRef {
  return { upstreamId, upstreamModel: UPSTREAM_MODEL, signal };
}

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a GatewayError, got success');
}

async function collect(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of body) parts.push(Buffer.from(part));
  return Buffer.concat(parts);
}

/** A server for wire details the fake does not produce; records each request's method and URL. */
async function rawServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; seen: string[]; close: () => Promise<void> }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method ?? ''} ${req.url ?? ''}`);
    req.resume();
    req.on('end', () => handler(req, res));
  });
  const local = await listenLocal(server);
  return { url: `${local.origin}/v1`, seen, close: () => local.close() };
}

async function withRaw(handler: (req: IncomingMessage, res: ServerResponse) => void, test: (videos: VideoJobs, seen: string[]) => Promise<void>): Promise<void> {
  const server = await rawServer(handler);
  const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
  try {
    await test(raw.videos!, server.seen);
  } finally {
    await raw.close();
    await server.close();
  }
}

function json(body: unknown, status = 200): (req: IncomingMessage, res: ServerResponse) => void {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

let fake: FakeOpenAI;
let adapter: ProviderAdapter;
let videos: VideoJobs;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  adapter = createOpenAIAdapter(providerConfig(fake.url, { headers: { 'OpenAI-Organization': 'org-tollgate' } }), { connectTimeoutMs: 2_000 });
  videos = adapter.videos!;
});

afterAll(async () => {
  await adapter.close();
  await fake.close();
});

afterEach(() => {
  fake.behave({ kind: 'ok' });
  fake.videos.reset();
  fake.requests.length = 0;
});

describe('OpenAI adapter: video create', () => {
  it('posts the multipart form the openai SDK sends and returns the queued job', async () => {
    const job = await videos.create(videoCall({ seconds: '8', size: '1280x720' }));
    expect(job).toEqual({ id: expect.stringMatching(/^video_[0-9a-f]{32}$/), status: 'queued', progress: 0 });
    const sent = fake.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/videos');
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(sent.headers.authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`);
    expect(sent.headers['openai-organization']).toBe('org-tollgate');
    const form = sent.body as FakeForm;
    expect(form.fields).toEqual([
      ['prompt', PROMPT],
      ['model', UPSTREAM_MODEL],
      ['seconds', '8'],
      ['size', '1280x720'],
    ]);
    expect(form.files).toEqual([]);
    expect(fake.videos.jobs.get(job.id)).toMatchObject({ model: UPSTREAM_MODEL, seconds: '8', size: '1280x720', prompt: PROMPT });
  });

  it('leaves seconds and size to the upstream when the caller gave none', async () => {
    const job = await videos.create(videoCall());
    expect((fake.requests[0]!.body as FakeForm).fields).toEqual([
      ['prompt', PROMPT],
      ['model', UPSTREAM_MODEL],
    ]);
    expect(fake.videos.jobs.get(job.id)).toMatchObject({ seconds: '4', size: '720x1280' });
  });

  it('uploads the reference as the input_reference file part', async () => {
    await videos.create(videoCall({ size: '1280x720' }, { reference: bytesFile(REFERENCE, 'first-frame.png', 'image/png') }));
    const reference = formFile(fake.requests[0]!.body as FakeForm, 'input_reference');
    expect(reference).toMatchObject({ filename: 'first-frame.png', contentType: 'image/png', size: REFERENCE.length });
    expect(reference?.head.equals(REFERENCE.subarray(0, 64))).toBe(true);
  });

  it('an invalid value rejected upstream (400) is upstream_rejected_request with its param', async () => {
    const error = await failure(videos.create(videoCall({ seconds: '5' })));
    expect(error.code).toBe('upstream_rejected_request');
    expect(error.status).toBe(400);
    expect(error.param).toBe('seconds');
    expect(error.message).toContain("Invalid value: '5'");
  });

  it('upstream 429 is upstream_unavailable with Retry-After', async () => {
    fake.behave({ kind: 'error', status: 429, type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached.', retryAfter: '30' });
    const error = await failure(videos.create(videoCall()));
    expect(error.code).toBe('upstream_unavailable');
    expect(error.retryAfterSeconds).toBe(30);
  });

  it('a refused key is upstream_auth_failed, without the key in the message', async () => {
    const wrongKey = 'sk-wrong-0123456789abcdefghijklmnopqrstuvwxyz';
    const wrong = createOpenAIAdapter(providerConfig(fake.url, { api_key: wrongKey }), { connectTimeoutMs: 2_000 });
    try {
      const error = await failure(wrong.videos!.create(videoCall()));
      expect(error.code).toBe('upstream_auth_failed');
      expect(error.message).not.toContain(wrongKey);
    } finally {
      await wrong.close();
    }
  });

  it('aborting mid-upload of the reference ends the call with the abort reason and closes the file', async () => {
    const reference = stalledFile(Buffer.alloc(1024, 7), 1024 * 1024, 'frame.png');
    const controller = new Cancellation();
    const reason = new GatewayError('upstream_timeout', 'total budget spent');
    setTimeout(() => controller.abort(reason), 80);
    expect(await failure(videos.create(videoCall({}, { reference, signal: controller.signal })))).toBe(reason);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reference.streams[0]?.destroyed).toBe(true);
  });
});

describe('OpenAI adapter: video polling and content', () => {
  it('follows a job from queued through in_progress to completed, then downloads the MP4', async () => {
    fake.videos.configure({ pollsToComplete: 3 });
    const job = await videos.create(videoCall());
    expect(await videos.retrieve(ref(job.id))).toEqual({ id: job.id, status: 'in_progress', progress: 33 });
    expect(await videos.retrieve(ref(job.id))).toEqual({ id: job.id, status: 'in_progress', progress: 66 });
    expect(await videos.retrieve(ref(job.id))).toEqual({ id: job.id, status: 'completed', progress: 100 });
    const content = await videos.content(ref(job.id));
    expect(content.contentType).toBe('video/mp4');
    expect((await collect(content.body)).equals(FAKE_MP4)).toBe(true);
    const polls = fake.requests.slice(1);
    expect(polls.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET /v1/videos/${job.id}`,
      `GET /v1/videos/${job.id}`,
      `GET /v1/videos/${job.id}`,
      `GET /v1/videos/${job.id}/content`,
    ]);
    // No body, so no content type; the content download asks for binary as the SDK does.
    expect(polls[0]!.headers['content-type']).toBeUndefined();
    expect(polls[0]!.headers.accept).toBe('application/json');
    expect(polls[3]!.headers.accept).toBe('application/binary');
    expect(polls[3]!.headers.authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`);
  });

  it('reports a failed job with its error', async () => {
    fake.videos.configure({ pollsToComplete: 1, failWith: { code: 'moderation_blocked', message: 'The prompt was blocked by moderation.' } });
    const job = await videos.create(videoCall());
    const failed = await videos.retrieve(ref(job.id));
    expect(failed).toMatchObject({ id: job.id, status: 'failed', error: { code: 'moderation_blocked', message: 'The prompt was blocked by moderation.' } });
  });

  it("scrubs the key from a failed job's message", async () => {
    fake.videos.configure({ pollsToComplete: 1, failWith: { code: 'internal', message: `backend refused ${FAKE_OPENAI_KEY}` } });
    const job = await videos.create(videoCall());
    const failed = await videos.retrieve(ref(job.id));
    expect(failed.error?.message).toBe('backend refused [redacted]');
  });

  it('content before the job completed (404) fails with a GatewayError', async () => {
    const job = await videos.create(videoCall());
    const error = await failure(videos.content(ref(job.id)));
    expect(error.code).toBe('upstream_error');
    expect(error.status).toBe(502);
  });

  it('retrieving a job upstream errors fail with the mapped error', async () => {
    const job = await videos.create(videoCall());
    fake.behave({ kind: 'error', status: 503, type: 'server_error', code: null, message: 'Overloaded', retryAfter: '5' });
    const error = await failure(videos.retrieve(ref(job.id)));
    expect(error.code).toBe('upstream_unavailable');
    expect(error.retryAfterSeconds).toBe(5);
  });

  it('aborting a poll ends it with the abort reason', async () => {
    const job = await videos.create(videoCall());
    fake.behave({ kind: 'hang' });
    const controller = new Cancellation();
    const reason = new GatewayError('upstream_timeout', 'poll deadline passed');
    setTimeout(() => controller.abort(reason), 50);
    expect(await failure(videos.retrieve(ref(job.id, controller.signal)))).toBe(reason);
  });

  it('a content download cut mid-way ends iteration with upstream_stream_truncated', async () => {
    await withRaw(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'video/mp4' });
        res.write(FAKE_MP4.subarray(0, 8));
        setTimeout(() => res.socket?.destroy(), 20);
      },
      async (raw) => {
        const content = await raw.content(ref('video_abc'));
        expect((await failure(collect(content.body))).code).toBe('upstream_stream_truncated');
      },
    );
  });
});

describe('OpenAI adapter: video cancel', () => {
  it('deletes the job upstream', async () => {
    const job = await videos.create(videoCall());
    await videos.cancel(ref(job.id));
    expect(fake.requests.at(-1)).toMatchObject({ method: 'DELETE', path: `/v1/videos/${job.id}` });
    expect(fake.videos.jobs.has(job.id)).toBe(false);
  });

  it('ignores a job the upstream no longer has (404)', async () => {
    await expect(videos.cancel(ref('video_gone'))).resolves.toBeUndefined();
  });

  it('ignores a conflict (409)', async () => {
    await withRaw(json({ error: { message: 'Video is still processing.', type: 'invalid_request_error', param: null, code: 'conflict' } }, 409), async (raw) => {
      await expect(raw.cancel(ref('video_busy'))).resolves.toBeUndefined();
    });
  });

  it('throws on other failures', async () => {
    fake.behave({ kind: 'error', status: 500, type: 'server_error', code: null, message: 'The server had an error.' });
    const error = await failure(videos.cancel(ref('video_any')));
    expect(error.code).toBe('upstream_error');
  });
});

describe('OpenAI adapter: video wire details', () => {
  it('URL-encodes upstream ids into paths', async () => {
    const id = 'weird/../id ?#%';
    const video = { id, object: 'video', status: 'queued', progress: 0 };
    await withRaw(
      (req, res) => (req.url?.endsWith('/content') === true ? (res.writeHead(200, { 'content-type': 'video/mp4' }), res.end('mp4')) : json(video)(req, res)),
      async (raw, seen) => {
        await raw.retrieve(ref(id));
        await collect((await raw.content(ref(id))).body);
        await raw.cancel(ref(id));
        const encoded = 'weird%2F..%2Fid%20%3F%23%25';
        expect(seen).toEqual([`GET /v1/videos/${encoded}`, `GET /v1/videos/${encoded}/content`, `DELETE /v1/videos/${encoded}`]);
      },
    );
  });

  it('defaults the content type of a video to video/mp4', async () => {
    await withRaw(
      (_req, res) => {
        res.writeHead(200);
        res.end(FAKE_MP4);
      },
      async (raw) => {
        const content = await raw.content(ref('video_abc'));
        expect(content.contentType).toBe('video/mp4');
        expect((await collect(content.body)).equals(FAKE_MP4)).toBe(true);
      },
    );
  });

  it('clamps progress and gives a completed job without progress 100', async () => {
    await withRaw(json({ id: 'video_1', status: 'completed' }), async (raw) => {
      expect(await raw.retrieve(ref('video_1'))).toEqual({ id: 'video_1', status: 'completed', progress: 100 });
    });
    await withRaw(json({ id: 'video_1', status: 'in_progress', progress: 140 }), async (raw) => {
      expect(await raw.retrieve(ref('video_1'))).toEqual({ id: 'video_1', status: 'in_progress', progress: 100 });
    });
  });

  for (const [what, body] of [
    ['an unknown status', { id: 'video_1', status: 'rendering', progress: 10 }],
    ['no id', { status: 'queued', progress: 0 }],
    ['a ".." id', { id: '..', status: 'queued', progress: 0 }],
    ['a body that is not JSON', '<html>Bad gateway</html>'],
    ['a JSON array', '[]'],
  ] as const) {
    it(`a job with ${what} is upstream_malformed_response`, async () => {
      await withRaw(json(body), async (raw) => {
        const error = await failure(raw.retrieve(ref('video_1')));
        expect(error.code).toBe('upstream_malformed_response');
      });
    });
  }

  it('an error body under a 200 status is upstream_error with its message', async () => {
    await withRaw(json({ error: { message: 'sora backend unavailable', type: 'server_error', param: null, code: null } }), async (raw) => {
      const error = await failure(raw.create(videoCall()));
      expect(error.code).toBe('upstream_error');
      expect(error.message).toContain('sora backend unavailable');
    });
  });
});
