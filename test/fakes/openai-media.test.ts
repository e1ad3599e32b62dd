/**
 * The fake's audio and video routes are only useful if the real client accepts them: these
 * tests drive them with the official `openai` SDK, whose multipart encoder is not the gateway's.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeForm } from './multipart-form.js';
import { fakeAudioSeconds, fakeSpeechAudio, fakeTranscript } from './openai-audio.js';
import { FAKE_OPENAI_KEY, startFakeOpenAI, type FakeOpenAI } from './openai-server.js';
import { FAKE_MP4 } from './openai-videos.js';

let fake: FakeOpenAI;
let client: OpenAI;
const AUDIO = Buffer.alloc(40_000, 3);

beforeAll(async () => {
  fake = await startFakeOpenAI();
  client = new OpenAI({ apiKey: FAKE_OPENAI_KEY, baseURL: fake.url, maxRetries: 0 });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.behave({ kind: 'ok' });
  fake.videos.reset();
  fake.requests.length = 0;
});

describe('fake OpenAI audio', () => {
  it('answers speech the SDK reads as a binary response', async () => {
    const response = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello there', response_format: 'wav' });
    expect(response.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(await response.arrayBuffer()).equals(fakeSpeechAudio('wav', 'Hello there'))).toBe(true);
  });

  it('answers speech errors in OpenAI’s error shape', async () => {
    const error = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: '' }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input');
  });

  it("parses the SDK's multipart transcription upload and answers each format as the SDK expects", async () => {
    const json = await client.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(AUDIO, 'a.wav', { type: 'audio/wav' }) });
    expect(json.text).toBe(fakeTranscript(AUDIO.length));
    expect(json.usage).toEqual({ type: 'duration', seconds: Math.ceil(fakeAudioSeconds(AUDIO.length)) });
    const verbose = await client.audio.transcriptions.create({
      model: 'whisper-1',
      file: await toFile(AUDIO, 'a.wav'),
      response_format: 'verbose_json',
      timestamp_granularities: ['word'],
    });
    expect(verbose.duration).toBe(fakeAudioSeconds(AUDIO.length));
    expect(verbose.words?.length).toBeGreaterThan(0);
    const text = await client.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(AUDIO, 'a.wav'), response_format: 'text' });
    expect(text).toContain(`${AUDIO.length} bytes`);
    const form = fake.requests[1]!.body as FakeForm;
    expect(form.fields).toContainEqual(['timestamp_granularities[]', 'word']);
    expect(form.files[0]).toMatchObject({ field: 'file', filename: 'a.wav', size: AUDIO.length });
  });
});

describe('fake OpenAI videos', () => {
  it('runs a job through create, retrieve, download and delete with the SDK', async () => {
    fake.videos.configure({ pollsToComplete: 2 });
    const created = await client.videos.create({ model: 'sora-2', prompt: 'A cat', seconds: '4', input_reference: await toFile(Buffer.alloc(500, 1), 'ref.png', { type: 'image/png' }) });
    expect(created).toMatchObject({ object: 'video', status: 'queued', progress: 0, model: 'sora-2', seconds: '4', size: '720x1280', error: null });
    expect((fake.requests[0]!.body as FakeForm).files[0]).toMatchObject({ field: 'input_reference', filename: 'ref.png', size: 500 });
    expect((await client.videos.retrieve(created.id)).status).toBe('in_progress');
    const done = await client.videos.retrieve(created.id);
    expect(done).toMatchObject({ status: 'completed', progress: 100 });
    expect(done.completed_at).toBeGreaterThan(0);
    const content = await client.videos.downloadContent(created.id);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await content.arrayBuffer()).equals(FAKE_MP4)).toBe(true);
    expect(await client.videos.delete(created.id)).toEqual({ id: created.id, object: 'video.deleted', deleted: true });
    await expect(client.videos.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('refuses the content of an unfinished job with a 404', async () => {
    const created = await client.videos.create({ prompt: 'A dog' });
    await expect(client.videos.downloadContent(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
