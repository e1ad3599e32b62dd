import { Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { MockOptions, ProviderConfig } from '../../config/schema.js';
import { GatewayError } from '../../errors/index.js';
import type { SpeechRequest, TranscriptionRequest } from '../../protocol/audio.js';
import { pcmDurationSeconds, wavDurationSeconds } from '../../protocol/audio-duration.js';
import { Cancellation } from '../../util/cancellation.js';
import type { InputFile, ProviderAdapter, SpeechResult, VideoJobRef } from '../types.js';
import { createMockAdapter } from './adapter.js';
import { SPEECH_PIECE_BYTES, mockSpeechSeconds } from './speech.js';
import { toneWav } from './wav.js';

const MOCK_DEFAULTS: MockOptions = { latency_ms: 0, chunk_delay_ms: 0, malformed: false, hang: false, crash: false, missing_capabilities: [], video_ms: 3_000, video_fail: false };

function mockAdapter(mock: Partial<MockOptions> = {}): ProviderAdapter {
  const provider: ProviderConfig = {
    id: 'mock-test',
    kind: 'mock',
    headers: {},
    max_connections: 1,
    anthropic_version: '2023-06-01',
    output_cap_field: 'max_completion_tokens',
    mock: { ...MOCK_DEFAULTS, ...mock },
  };
  return createMockAdapter(provider);
}

function callBase(): { upstreamModel: string; signal: Cancellation; requestId: string } {
  return { upstreamModel: 'mock-audio', signal: new Cancellation(), requestId: 'req_test' };
}

async function speak(adapter: ProviderAdapter, request: Partial<SpeechRequest>, signal = new Cancellation()): Promise<SpeechResult> {
  return adapter.speech!({ ...callBase(), signal, request: { model: 'tts', input: 'Hello there.', voice: 'alloy', ...request } });
}

async function collect(audio: AsyncIterable<Uint8Array>): Promise<{ bytes: Buffer; pieces: number[] }> {
  const parts: Uint8Array[] = [];
  for await (const part of audio) parts.push(part);
  return { bytes: Buffer.concat(parts), pieces: parts.map((p) => p.length) };
}

/** An uploaded file whose bytes arrive in pieces of `pieceBytes`, counting how often it was opened. */
function inputFile(filename: string, bytes: Buffer, pieceBytes = 65_536): InputFile & { opened: number; finished: number } {
  const file = {
    filename,
    contentType: 'application/octet-stream',
    size: bytes.length,
    opened: 0,
    finished: 0,
    open(): Promise<NodeJS.ReadableStream> {
      file.opened++;
      const pieces: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += pieceBytes) pieces.push(bytes.subarray(at, at + pieceBytes));
      const stream = Readable.from(pieces);
      stream.on('end', () => file.finished++);
      return Promise.resolve(stream);
    },
  };
  return file;
}

function transcribe(adapter: ProviderAdapter, file: InputFile, request: Partial<TranscriptionRequest> = {}) {
  return adapter.transcription!({ ...callBase(), file, request: { model: 'whisper-1', ...request } });
}

describe('mock speech', () => {
  it('answers a WAV whose header says the text-derived length, in pieces of at most 16 KiB', async () => {
    const input = 'x'.repeat(150); // 10 seconds at 15 characters a second
    const result = await speak(mockAdapter(), { input, response_format: 'wav' });
    expect(result.contentType).toBe('audio/wav');
    const { bytes, pieces } = await collect(result.audio);
    expect(bytes.toString('latin1', 0, 4)).toBe('RIFF');
    expect(wavDurationSeconds(bytes, bytes.length)).toBe(10);
    expect(Math.max(...pieces)).toBeLessThanOrEqual(SPEECH_PIECE_BYTES);
    expect(pieces.length).toBeGreaterThan(1);
  });

  it('answers raw 24 kHz PCM for pcm, with speed dividing the length', async () => {
    const result = await speak(mockAdapter(), { input: 'y'.repeat(60), response_format: 'pcm', speed: 2 });
    expect(result.contentType).toBe('audio/pcm');
    const { bytes } = await collect(result.audio);
    expect(pcmDurationSeconds(bytes.length)).toBe(2);
    expect(bytes.toString('latin1', 0, 4)).not.toBe('RIFF');
  });

  it('answers formats it cannot encode (mp3, the default) as WAV, saying so in the content type', async () => {
    const result = await speak(mockAdapter(), {});
    expect(result.contentType).toBe('audio/wav');
    const { bytes } = await collect(result.audio);
    expect(wavDurationSeconds(bytes, bytes.length)).toBe(1);
  });

  it('takes at least a second and at most 300', () => {
    expect(mockSpeechSeconds('')).toBe(1);
    expect(mockSpeechSeconds('a'.repeat(16))).toBe(2);
    expect(mockSpeechSeconds('a'.repeat(4096), 0.25)).toBe(300);
  });

  it('stops the audio with the cancellation reason when the call is aborted', async () => {
    const signal = new Cancellation();
    const result = await speak(mockAdapter(), { input: 'z'.repeat(300) }, signal);
    const iterator = result.audio[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    const reason = new GatewayError('generation_timeout');
    signal.abort(reason);
    await expect(iterator.next()).rejects.toBe(reason);
  });

  it('is cancelled during its latency too', async () => {
    const signal = new Cancellation();
    const pending = speak(mockAdapter({ latency_ms: 60_000 }), {}, signal);
    signal.abort();
    await expect(pending).rejects.toMatchObject({ code: 'upstream_unreachable' });
  });
});

describe('mock transcription', () => {
  const wav = toneWav(2.5);

  it('answers json with usage in whole seconds, and knows the WAV length even when it arrives in small pieces', async () => {
    const file = inputFile('talk.wav', wav, 1000);
    const result = await transcribe(mockAdapter(), file);
    expect(result.contentType).toBe('application/json');
    expect(result.seconds).toBe(2.5);
    expect(JSON.parse(result.body)).toEqual({ text: `Mock transcription of talk.wav (${wav.length} bytes).`, usage: { type: 'duration', seconds: 3 } });
    expect(file.finished).toBe(1);
  });

  it('answers text, srt and vtt as plain text with one cue over the whole audio', async () => {
    const adapter = mockAdapter();
    const text = `Mock transcription of talk.wav (${wav.length} bytes).`;
    const answers = await Promise.all(
      (['text', 'srt', 'vtt'] as const).map((response_format) => transcribe(adapter, inputFile('talk.wav', wav), { response_format })),
    );
    for (const answer of answers) {
      expect(answer.contentType).toBe('text/plain; charset=utf-8');
      expect(answer.seconds).toBe(2.5);
    }
    expect(answers.map((a) => a.body)).toEqual([
      `${text}\n`,
      `1\n00:00:00,000 --> 00:00:02,500\n${text}\n\n`,
      `WEBVTT\n\n00:00:00.000 --> 00:00:02.500\n${text}\n\n`,
    ]);
  });

  it('answers verbose_json with segments by default, and words when asked', async () => {
    const adapter = mockAdapter();
    const plain = JSON.parse((await transcribe(adapter, inputFile('talk.wav', wav), { response_format: 'verbose_json', language: 'de' })).body);
    expect(plain).toMatchObject({ task: 'transcribe', language: 'german', duration: 2.5, usage: { type: 'duration', seconds: 3 } });
    expect(plain.segments).toEqual([expect.objectContaining({ id: 0, start: 0, end: 2.5, text: ` ${plain.text}` })]);
    expect(plain.words).toBeUndefined();

    const both = await transcribe(adapter, inputFile('talk.wav', wav), { response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'] });
    expect(both.contentType).toBe('application/json');
    const body = JSON.parse(both.body);
    expect(body.language).toBe('english');
    expect(body.segments).toHaveLength(1);
    expect(body.words.map((w: { word: string }) => w.word).join(' ')).toBe(body.text);
    expect(body.words.at(-1).end).toBe(2.5);

    const wordsOnly = JSON.parse((await transcribe(adapter, inputFile('talk.wav', wav), { response_format: 'verbose_json', timestamp_granularities: ['word'] })).body);
    expect(wordsOnly.words.length).toBeGreaterThan(0);
    expect(wordsOnly.segments).toBeUndefined();
  });

  it('leaves seconds null for a file that is not a WAV, and reports no usage for it', async () => {
    const mp3 = Buffer.concat([Buffer.from('ID3\x04\x00\x00'), Buffer.alloc(50_000, 0x55)]);
    const result = await transcribe(mockAdapter(), inputFile('talk.mp3', mp3));
    expect(result.seconds).toBeNull();
    expect(JSON.parse(result.body)).toEqual({ text: 'Mock transcription of talk.mp3 (50006 bytes).' });
  });

  it('stops reading the file, and closes it, when the call is aborted', async () => {
    const signal = new Cancellation();
    const reason = new GatewayError('generation_timeout');
    let piecesRead = 0;
    let closed = false;
    async function* upload(): AsyncGenerator<Buffer> {
      try {
        for (;;) {
          piecesRead++;
          if (piecesRead === 3) signal.abort(reason);
          yield Buffer.alloc(1024);
          await new Promise((resolve) => setImmediate(resolve));
        }
      } finally {
        closed = true;
      }
    }
    const file: InputFile = { filename: 'endless.wav', contentType: 'audio/wav', size: Infinity, open: () => Promise.resolve(Readable.from(upload())) };
    await expect(mockAdapter().transcription!({ ...callBase(), signal, file, request: { model: 'whisper-1' } })).rejects.toBe(reason);
    await vi.waitFor(() => expect(closed).toBe(true));
    expect(piecesRead).toBeLessThan(10);
  });
});

describe('mock videos', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const T0 = Date.UTC(2026, 0, 1);
  const ref = (upstreamId: string): VideoJobRef => ({ upstreamId, upstreamModel: 'sora-mock', signal: new Cancellation() });
  const create = (adapter: ProviderAdapter, request: { seconds?: string; size?: string } = {}, reference?: InputFile) =>
    adapter.videos!.create({ ...callBase(), request: { model: 'sora-mock', prompt: 'a grey cat', ...request }, ...(reference ? { reference } : {}) });

  it('goes queued, in progress, completed by the clock alone, and any instance can tell (a restart loses nothing)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0);
    const job = await create(mockAdapter({ video_ms: 10_000 }), { seconds: '8', size: '1280x720' });
    expect(job).toEqual({ id: expect.stringMatching(/^mockvid_[0-9a-z]+_[0-9a-z]+_8_1280x720_c$/), status: 'queued', progress: 0 });

    const afterRestart = mockAdapter({ video_ms: 1 }); // other settings apply to new jobs only
    const at = async (ms: number) => {
      vi.setSystemTime(T0 + ms);
      return afterRestart.videos!.retrieve(ref(job.id));
    };
    expect(await at(999)).toMatchObject({ status: 'queued', progress: 0 });
    expect(await at(1_000)).toMatchObject({ status: 'in_progress', progress: 10 });
    expect(await at(5_555)).toMatchObject({ status: 'in_progress', progress: 55 });
    expect(await at(9_999)).toMatchObject({ status: 'in_progress', progress: 99 });
    expect(await at(10_000)).toEqual({ id: job.id, status: 'completed', progress: 100 });
  });

  it('serves the finished video as an MP4 of the requested length and size', async () => {
    const adapter = mockAdapter({ video_ms: 0 });
    const job = await create(adapter, { seconds: '4', size: '720x1280' });
    expect(job.status).toBe('completed');
    const content = await adapter.videos!.content(ref(job.id));
    expect(content.contentType).toBe('video/mp4');
    const { bytes } = await collect(content.body);
    expect(bytes.toString('latin1', 4, 12)).toBe('ftypisom');
    const mvhd = bytes.indexOf('mvhd') + 4;
    expect(bytes.readUInt32BE(mvhd + 16) / bytes.readUInt32BE(mvhd + 12)).toBe(4);
    const tkhd = bytes.indexOf('tkhd') + 4;
    expect([bytes.readUInt32BE(tkhd + 76) / 0x10000, bytes.readUInt32BE(tkhd + 80) / 0x10000]).toEqual([720, 1280]);
  });

  it('uses the defaults of 4 seconds at 720x1280', async () => {
    const job = await create(mockAdapter());
    expect(job.id).toMatch(/_4_720x1280_c$/);
  });

  it('ends failed with an error when video_fail is set, and has no content then', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0);
    const adapter = mockAdapter({ video_ms: 2_000, video_fail: true });
    const job = await create(adapter);
    expect(job.id).toMatch(/_f$/);
    await expect(adapter.videos!.content(ref(job.id))).rejects.toMatchObject({ code: 'upstream_rejected_request' });
    vi.setSystemTime(T0 + 2_000);
    expect(await adapter.videos!.retrieve(ref(job.id))).toEqual({ id: job.id, status: 'failed', progress: 100, error: { code: 'mock_failure', message: expect.any(String) } });
    await expect(adapter.videos!.content(ref(job.id))).rejects.toMatchObject({ code: 'upstream_rejected_request' });
  });

  it('has no content while the job is still running', async () => {
    const adapter = mockAdapter({ video_ms: 60_000 });
    const job = await create(adapter);
    await expect(adapter.videos!.content(ref(job.id))).rejects.toMatchObject({ code: 'upstream_rejected_request', message: expect.stringContaining('queued') });
  });

  it('rejects an id it did not make', async () => {
    const adapter = mockAdapter();
    for (const id of ['video_123', 'mockvid_zz_1_4_720x1280_x', '']) {
      await expect(adapter.videos!.retrieve(ref(id))).rejects.toMatchObject({ code: 'upstream_rejected_request', message: expect.stringContaining('404') });
      await expect(adapter.videos!.content(ref(id))).rejects.toBeInstanceOf(GatewayError);
    }
  });

  it('rejects sizes and lengths it cannot make', async () => {
    const adapter = mockAdapter();
    for (const size of ['1921x1080', '721x1280', '0x720', 'big', '1280X720']) {
      await expect(create(adapter, { size })).rejects.toMatchObject({ code: 'upstream_rejected_request', param: 'size' });
    }
    for (const seconds of ['0', '61', '4.5', 'four', '-4']) {
      await expect(create(adapter, { seconds })).rejects.toMatchObject({ code: 'upstream_rejected_request', param: 'seconds' });
    }
  });

  it('reads the reference file to the end', async () => {
    const reference = inputFile('start.png', Buffer.alloc(200_000, 7), 16_384);
    await create(mockAdapter(), {}, reference);
    expect(reference).toMatchObject({ opened: 1, finished: 1 });
  });

  it('has nothing to cancel', async () => {
    const adapter = mockAdapter();
    const job = await create(adapter);
    await expect(adapter.videos!.cancel(ref(job.id))).resolves.toBeUndefined();
  });
});

describe('mock faults on audio and video', () => {
  it('answers fail_status 503 as upstream_unavailable for speech, transcription and video creation', async () => {
    const adapter = mockAdapter({ fail_status: 503, retry_after_seconds: 2 });
    await expect(speak(adapter, {})).rejects.toMatchObject({ code: 'upstream_unavailable', retryAfterSeconds: 2 });
    await expect(transcribe(adapter, inputFile('a.wav', toneWav(1)))).rejects.toMatchObject({ code: 'upstream_unavailable' });
    await expect(adapter.videos!.create({ ...callBase(), request: { model: 'sora-mock', prompt: 'p' } })).rejects.toMatchObject({ code: 'upstream_unavailable' });
  });

  it('recovers after faulty_requests, counting every kind of call', async () => {
    const adapter = mockAdapter({ fail_status: 500, faulty_requests: 2 });
    await expect(speak(adapter, {})).rejects.toMatchObject({ code: 'upstream_error' });
    await expect(transcribe(adapter, inputFile('a.wav', toneWav(1)))).rejects.toMatchObject({ code: 'upstream_error' });
    const job = await adapter.videos!.create({ ...callBase(), request: { model: 'sora-mock', prompt: 'p' } });
    expect(job.status).toBe('queued');
  });

  it('fails only job creation, never polling an existing job', async () => {
    const healthy = mockAdapter({ video_ms: 0 });
    const job = await healthy.videos!.create({ ...callBase(), request: { model: 'sora-mock', prompt: 'p' } });
    const broken = mockAdapter({ fail_status: 503 });
    const upstreamId = job.id;
    expect(await broken.videos!.retrieve({ upstreamId, upstreamModel: 'sora-mock', signal: new Cancellation() })).toMatchObject({ status: 'completed' });
  });

  it('simulates a crash and a malformed answer like the other calls', async () => {
    await expect(speak(mockAdapter({ crash: true }), {})).rejects.not.toBeInstanceOf(GatewayError);
    await expect(speak(mockAdapter({ malformed: true }), {})).rejects.toMatchObject({ code: 'upstream_malformed_response' });
  });
});
