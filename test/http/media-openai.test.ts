/**
 * Audio and video through the OpenAI adapter, black box: the official SDK against a listening
 * gateway whose routes lead to the local OpenAI stand-in (its real wire formats: binary speech,
 * multipart transcriptions, video jobs polled until done). Checks what reaches the upstream, what
 * comes back, what is charged, and that a job the upstream forgot ends failed and refunded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { until } from '../support/until.js';
import { startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { FAKE_OPENAI_KEY, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.js';
import { FAKE_MP4 } from '../fakes/openai-videos.js';
import { fakeAudioSeconds, fakeTranscript } from '../fakes/openai-audio.js';

const price = { per_audio_second: 0.01, per_video_second: 0.1 };

let upstream: FakeOpenAI;
let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeOpenAI();
  gw = await startGateway({
    config: {
      videos: { poll_interval_ms: 50 },
      providers: [{ id: 'openai', kind: 'openai', base_url: upstream.url, api_key: FAKE_OPENAI_KEY }],
      models: [
        { id: 'tts', capabilities: ['speech'], context_window: 4096, price, routes: [{ provider: 'openai', model: 'gpt-4o-mini-tts' }] },
        { id: 'whisper', capabilities: ['transcription'], context_window: 4096, price, routes: [{ provider: 'openai', model: 'whisper-1' }] },
        { id: 'sora', capabilities: ['video'], context_window: 4096, price, routes: [{ provider: 'openai', model: 'sora-2' }] },
      ],
    },
  });
  client = new OpenAI({ apiKey: gw.keys.main!, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const balance = async (): Promise<number> => (await gw.gateway.store.getAccount('acct'))!.balanceMicros;

describe('through the OpenAI adapter', () => {
  it('relays speech as the upstream streams it, with the upstream model and the caller\'s voice', async () => {
    const before = await balance();
    const response = await client.audio.speech.create({ model: 'tts', voice: 'coral', input: 'Good morning.', response_format: 'wav' });
    expect(response.headers.get('content-type')).toMatch(/^audio\/wav/);
    const audio = Buffer.from(await response.arrayBuffer());
    expect(audio.subarray(0, 4).toString('latin1')).toBe('RIFF');
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1/audio/speech');
    expect(sent.body).toMatchObject({ model: 'gpt-4o-mini-tts', voice: 'coral', input: 'Good morning.' });
    // Charged once the audio ended; waited for, so that the next test's balance is its own.
    expect(await until(balance, (now) => now !== before)).toBeLessThan(before);
  });

  it('sends a transcription\'s file whole and charges the seconds the upstream reports', async () => {
    const before = await balance();
    const bytes = Buffer.alloc(48_000, 7);
    const result = await client.audio.transcriptions.create({ model: 'whisper', file: await toFile(bytes, 'clip.mp3', { type: 'audio/mpeg' }), response_format: 'verbose_json' });
    expect(result.text).toBe(fakeTranscript(bytes.length));
    await until(balance, (now) => now !== before);
    expect(before - (await balance())).toBe(Math.ceil(fakeAudioSeconds(bytes.length) * 10_000));
  });

  it('translates speech through the upstream\'s translations endpoint, charged as a transcription', async () => {
    const before = await balance();
    const bytes = Buffer.alloc(32_000, 7);
    const result = await client.audio.translations.create({ model: 'whisper', file: await toFile(bytes, 'clip.mp3', { type: 'audio/mpeg' }), response_format: 'verbose_json' });
    expect(result.text).toBe(fakeTranscript(bytes.length));
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1/audio/translations');
    await until(balance, (now) => now !== before);
    expect(before - (await balance())).toBe(Math.ceil(fakeAudioSeconds(bytes.length) * 10_000));
    const form = new FormData();
    form.set('model', 'whisper');
    form.set('language', 'fr');
    form.set('file', new Blob([bytes], { type: 'audio/mpeg' }), 'clip.mp3');
    const refused = await fetch(`${gw.baseURL}/audio/translations`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}` }, body: form });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { param: string } }).error.param).toBe('language');
  });

  it('creates a video job upstream, polls it to the end, and keeps its MP4', async () => {
    const job = await client.videos.create({ model: 'sora', prompt: 'a paper boat', seconds: '4' });
    expect(job.status).toBe('queued');
    const done = await until(() => client.videos.retrieve(job.id), (v) => v.status === 'completed');
    expect(done.status).toBe('completed');
    const content = await client.videos.downloadContent(job.id);
    expect(Buffer.from(await content.arrayBuffer())).toEqual(FAKE_MP4);
    const create = upstream.requests.find((r) => r.path === '/v1/videos' && r.method === 'POST');
    expect(create).toBeDefined();
  });

  it('fails and refunds a job the upstream no longer knows', async () => {
    upstream.videos.configure({ pollsToComplete: 1_000 });
    const before = await balance();
    const job = await client.videos.create({ model: 'sora', prompt: 'forgotten', seconds: '8' });
    expect(before - (await balance())).toBe(800_000);
    upstream.videos.jobs.clear();
    const failed = await until(() => client.videos.retrieve(job.id), (v) => v.status === 'failed');
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('upstream_job_lost');
    expect(await balance()).toBe(before);
    upstream.videos.reset();
  });
});
