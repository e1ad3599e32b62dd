/**
 * Video generation as jobs, black box: the official SDK against a listening gateway with the
 * mock provider (jobs timed by config, a real MP4 at the end): create answers at once, the job
 * moves through queued and in_progress to completed, its video is an asset with range requests;
 * cancel, delete, list; 404 for another account's job; 409 for a job in flight (a resend with the
 * same Idempotency-Key, a delete, its content) and for cancelling a finished one; failed jobs and
 * cancelled ones are refunded; jobs survive a restart of the gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { until } from '../support/until.js';
import { startGateway, errorOf, type RunningGateway } from '../support/gateway-harness.js';
import { TINY_PNG } from '../fakes/openai-images.js';

const price = { per_video_second: 0.1 };
const videoModel = (id: string, provider: string) => ({ id, capabilities: ['video'], context_window: 4096, price, routes: [{ provider, model: 'mock-director' }] });

function config(videoMs: number): Record<string, unknown> {
  return {
    videos: { poll_interval_ms: 50 },
    providers: [
      { id: 'mock', kind: 'mock', mock: { video_ms: videoMs } },
      { id: 'slow', kind: 'mock', mock: { video_ms: 600_000 } },
      { id: 'failing', kind: 'mock', mock: { video_ms: 100, video_fail: true } },
      { id: 'claude', kind: 'anthropic', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-ant-unused' },
    ],
    models: [
      videoModel('mock-video', 'mock'),
      videoModel('slow-video', 'slow'),
      videoModel('failing-video', 'failing'),
      videoModel('claude-video', 'claude'),
      { id: 'mock-chat', capabilities: ['chat'], context_window: 4096, routes: [{ provider: 'mock', model: 'mock-upstream' }] },
    ],
    tiers: { standard: { models: ['*'], endpoints: ['*'] }, capped: { models: ['*'], endpoints: ['*'], limits: { daily: { video: 1 } } } },
  };
}

let gw: RunningGateway;
let client: OpenAI;
let other: OpenAI;

beforeAll(async () => {
  gw = await startGateway({ accounts: { acct: 'standard', other: 'standard', capped: 'capped' }, keys: { main: { account: 'acct' }, other: { account: 'other' }, capped: { account: 'capped' } }, config: config(300) });
  client = new OpenAI({ apiKey: gw.keys.main!, baseURL: gw.baseURL, maxRetries: 0 });
  other = new OpenAI({ apiKey: gw.keys.other!, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
});

const balance = async (account = 'acct'): Promise<number> => (await gw.gateway.store.getAccount(account))!.balanceMicros;

function post(path: string, body: unknown, headers: Record<string, string> = {}, key = gw.keys.main!): Promise<Response> {
  return fetch(`${gw.baseURL}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

describe('video jobs', () => {
  it('creates a job at once, charges its seconds, and ends with a real MP4 served with ranges', async () => {
    const before = await balance();
    const created = await client.videos.create({ model: 'mock-video', prompt: 'a cat on a skateboard', seconds: '4', size: '1280x720' });
    expect(created).toMatchObject({ object: 'video', model: 'mock-video', status: 'queued', progress: 0, seconds: '4', size: '1280x720', error: null });
    expect(created.id).toMatch(/^video_[0-9a-f]{24}$/);
    expect(before - (await balance())).toBe(400_000);

    const seen = new Set<string>();
    const done = await until(async () => {
      const job = await client.videos.retrieve(created.id);
      seen.add(job.status);
      return job;
    }, (job) => job.status === 'completed');
    expect(done).toMatchObject({ status: 'completed', progress: 100 });
    expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at);
    expect(seen.has('in_progress') || seen.has('queued')).toBe(true);

    const content = await client.videos.downloadContent(created.id);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    const mp4 = Buffer.from(await content.arrayBuffer());
    expect(mp4.subarray(4, 8).toString('latin1')).toBe('ftyp');
    const range = await fetch(`${gw.baseURL}/videos/${created.id}/content`, { headers: { authorization: `Bearer ${gw.keys.main}`, range: 'bytes=4-7' } });
    expect([range.status, await range.text()]).toEqual([206, 'ftyp']);
    // The same bytes are an asset of the account.
    const assetId = ((await (await fetch(`${gw.baseURL}/videos/${created.id}`, { headers: { authorization: `Bearer ${gw.keys.main}` } })).json()) as { asset_id: string }).asset_id;
    expect(assetId).toMatch(/^asset_/);
  });

  it('takes JSON too, and a reference image as a file part or as an uploaded file id', async () => {
    const json = await post('/videos', { model: 'mock-video', prompt: 'waves', seconds: 8 });
    expect(json.status).toBe(200);
    expect(((await json.json()) as { seconds: string }).seconds).toBe('8');
    const withPart = await client.videos.create({ model: 'mock-video', prompt: 'from a picture', input_reference: await toFile(TINY_PNG, 'ref.png', { type: 'image/png' }) });
    expect(withPart.status).toBe('queued');
    const upload = await client.files.create({ file: await toFile(TINY_PNG, 'ref.png', { type: 'image/png' }), purpose: 'vision' });
    const byId = await post('/videos', { model: 'mock-video', prompt: 'from an upload', input_reference: { file_id: upload.id } });
    expect(byId.status).toBe(200);
    const missing = await errorOf(await post('/videos', { model: 'mock-video', prompt: 'x', input_reference: { file_id: 'file-000000000000000000000000' } }));
    expect([missing.status, missing.body.error.code]).toEqual([404, 'file_not_found']);
    // Only the gateway's own form parsing may name a stored blob; in JSON it is an unknown field.
    const forged = { blob_id: 'blob_0123456789abcdef01234567', bytes: 29, filename: 'a.png', content_type: 'image/png', sha256: '0' };
    const refused = await errorOf(await post('/videos', { model: 'mock-video', prompt: 'x', input_reference: forged }));
    expect([refused.status, refused.body.error.code, refused.body.error.param]).toEqual([400, 'invalid_parameter', 'input_reference[blob_id]']);
    for (const empty of [{}, []]) {
      const dropped = await errorOf(await post('/videos', { model: 'mock-video', prompt: 'x', input_reference: empty }));
      expect([dropped.status, dropped.body.error.code, dropped.body.error.param]).toEqual([400, 'invalid_parameter', 'input_reference']);
    }
  });

  it('lists the account\'s jobs newest first, page by page', async () => {
    const a = await client.videos.create({ model: 'slow-video', prompt: 'one' });
    const b = await client.videos.create({ model: 'slow-video', prompt: 'two' });
    const page = await client.videos.list({ limit: 1 });
    expect(page.data.map((v) => v.id)).toEqual([b.id]);
    const next = await page.getNextPage();
    expect(next.data.map((v) => v.id)).toEqual([a.id]);
    expect((await other.videos.list()).data).toEqual([]);
  });

  it('is 404 for a job of another account or none, on every route', async () => {
    const job = await client.videos.create({ model: 'slow-video', prompt: 'private' });
    await expect(other.videos.retrieve(job.id)).rejects.toMatchObject({ status: 404, code: 'video_not_found' });
    await expect(other.videos.delete(job.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.videos.downloadContent(job.id)).rejects.toMatchObject({ status: 404 });
    expect((await errorOf(await post(`/videos/${job.id}/cancel`, {}, {}, gw.keys.other))).status).toBe(404);
    await expect(client.videos.retrieve('video_ffffffffffffffffffffffff')).rejects.toMatchObject({ status: 404 });
    await expect(client.videos.retrieve('nonsense')).rejects.toMatchObject({ status: 404 });
  });

  it('is 409 while a job is in flight: a resend with its Idempotency-Key, a delete, its content; then cancel refunds it', async () => {
    const body = { model: 'slow-video', prompt: 'a long film', seconds: '12' };
    const before = await balance();
    const first = await post('/videos', body, { 'idempotency-key': 'film-1' });
    expect(first.status).toBe(200);
    const job = (await first.json()) as { id: string };
    expect(before - (await balance())).toBe(1_200_000);

    const resend = await errorOf(await post('/videos', body, { 'idempotency-key': 'film-1' }));
    expect([resend.status, resend.body.error.code]).toEqual([409, 'video_job_in_progress']);
    expect(resend.body.error.message).toContain(job.id);
    const deleteAnswer = await fetch(`${gw.baseURL}/videos/${job.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${gw.keys.main}` } });
    expect(deleteAnswer.headers.get('retry-after')).toBe('5');
    const deleting = await errorOf(deleteAnswer);
    expect([deleting.status, deleting.body.error.code]).toEqual([409, 'video_job_in_progress']);
    const content = await errorOf(await fetch(`${gw.baseURL}/videos/${job.id}/content`, { headers: { authorization: `Bearer ${gw.keys.main}` } }));
    expect(content.status).toBe(409);

    // As openai-python sends a POST without a body: labelled JSON, with nothing in it.
    const emptyCancel = await fetch(`${gw.baseURL}/videos/${job.id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json', 'idempotency-key': 'stop-1' } });
    expect(emptyCancel.status).toBe(200);
    const cancelled = (await emptyCancel.json()) as { status: string };
    expect(cancelled.status).toBe('cancelled');
    expect(await balance()).toBe(before);
    // Resent under its key, the cancel gets its first answer back rather than "already finished".
    const resent = await post(`/videos/${job.id}/cancel`, {}, { 'idempotency-key': 'stop-1' });
    expect([resent.status, resent.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
    expect(((await resent.json()) as { status: string }).status).toBe('cancelled');
    const again = await errorOf(await post(`/videos/${job.id}/cancel`, {}));
    expect([again.status, again.body.error.code]).toEqual([409, 'video_job_finished']);
    // Finished now: the creation is replayed, and the job can be deleted.
    const replay = await post('/videos', body, { 'idempotency-key': 'film-1' });
    expect([replay.status, replay.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
    expect(((await replay.json()) as { id: string }).id).toBe(job.id);
    expect(await client.videos.delete(job.id)).toEqual({ id: job.id, object: 'video.deleted', deleted: true });
    await expect(client.videos.retrieve(job.id)).rejects.toMatchObject({ status: 404 });
  });

  it('refunds a job that fails upstream and says why', async () => {
    const before = await balance();
    const job = await client.videos.create({ model: 'failing-video', prompt: 'doomed' });
    const failed = await until(() => client.videos.retrieve(job.id), (v) => v.status === 'failed');
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBeTruthy();
    expect(await balance()).toBe(before);
    const content = await errorOf(await fetch(`${gw.baseURL}/videos/${job.id}/content`, { headers: { authorization: `Bearer ${gw.keys.main}` } }));
    expect([content.status, content.body.error.code]).toEqual([404, 'video_not_found']);
  });

  it('refuses bad requests naming the field, a model without video (422), an adapter without it (501), and counts the daily cap', async () => {
    for (const [body, param] of [
      [{ model: 'mock-video' }, 'prompt'],
      [{ model: 'mock-video', prompt: 'x', seconds: '0' }, 'seconds'],
      [{ model: 'mock-video', prompt: 'x', size: 'big' }, 'size'],
      [{ model: 'mock-video', prompt: 'x', colour: 'red' }, 'colour'],
    ] as const) {
      const error = await errorOf(await post('/videos', body));
      expect([error.status, error.body.error.param]).toEqual([400, param]);
    }
    expect((await errorOf(await post('/videos', { model: 'mock-chat', prompt: 'x' }))).status).toBe(422);
    const unimplemented = await errorOf(await post('/videos', { model: 'claude-video', prompt: 'x' }));
    expect([unimplemented.status, unimplemented.body.error.code]).toEqual([501, 'capability_not_implemented']);
    expect((await post('/videos', { model: 'slow-video', prompt: 'x' }, {}, gw.keys.capped)).status).toBe(200);
    const capped = await errorOf(await post('/videos', { model: 'slow-video', prompt: 'x' }, {}, gw.keys.capped));
    expect([capped.status, capped.body.error.code]).toEqual([429, 'daily_cap_exceeded']);
  });
});

describe('video jobs across a restart', () => {
  it('carry on polling after the gateway restarts on the same store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-videos-'));
    const shared = { storage: { url: `sqlite://${join(dir, 'gw.db')}` }, blobs: { directory: join(dir, 'blobs') } };
    const presetKeys: Record<string, string> = {};
    const first = await startGateway({ config: { ...config(1_500), ...shared } });
    presetKeys.main = first.keys.main!;
    const sdk = (g: RunningGateway) => new OpenAI({ apiKey: g.keys.main!, baseURL: g.baseURL, maxRetries: 0 });
    const job = await sdk(first).videos.create({ model: 'mock-video', prompt: 'survives' });
    await first.close();

    const second = await startGateway({ config: { ...config(1_500), ...shared }, presetKeys });
    try {
      const done = await until(() => sdk(second).videos.retrieve(job.id), (v) => v.status === 'completed');
      expect(done.status).toBe('completed');
      const content = await sdk(second).videos.downloadContent(job.id);
      expect(Buffer.from(await content.arrayBuffer()).subarray(4, 8).toString('latin1')).toBe('ftyp');
    } finally {
      await second.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
