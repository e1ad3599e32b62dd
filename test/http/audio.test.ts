/**
 * POST /v1/audio/speech and /v1/audio/transcriptions, black box: the official SDK against a
 * listening gateway with the mock provider (real WAV and PCM; transcriptions of uploaded WAVs),
 * plus the errors a caller can meet: 400s naming the field, 404, 413, 422, 501 for Anthropic,
 * the audio daily cap, and the charge per second of audio.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { startGateway, errorOf, type RunningGateway } from '../support/gateway-harness.js';
import { toneWav } from '../../src/providers/mock/wav.js';
import { wavDurationSeconds } from '../../src/protocol/audio-duration.js';

const audioModel = (id: string, capabilities: string[], routes: unknown[], price: Record<string, number> = { per_audio_second: 0.01 }) => ({ id, capabilities, context_window: 4096, price, routes });

let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  gw = await startGateway({
    accounts: { acct: 'standard', capped: 'capped', poor: 'standard' },
    keys: { main: { account: 'acct' }, capped: { account: 'capped' } },
    config: {
      uploads: { max_bytes: '1mb' },
      providers: [
        { id: 'mock', kind: 'mock' },
        { id: 'claude', kind: 'anthropic', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-ant-unused' },
      ],
      models: [
        audioModel('mock-tts', ['speech'], [{ provider: 'mock', model: 'mock-voice' }]),
        audioModel('mock-whisper', ['transcription'], [{ provider: 'mock', model: 'mock-ears' }]),
        audioModel('claude-tts', ['speech', 'transcription'], [{ provider: 'claude', model: 'claude-haiku' }]),
        { id: 'mock-chat', capabilities: ['chat'], context_window: 4096, routes: [{ provider: 'mock', model: 'mock-upstream' }] },
      ],
      tiers: {
        standard: { models: ['*'], endpoints: ['*'] },
        capped: { models: ['*'], endpoints: ['*'], limits: { daily: { audio: 1 } } },
      },
    },
  });
  client = new OpenAI({ apiKey: gw.keys.main!, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
});

async function balance(account: string): Promise<number> {
  return (await gw.gateway.store.getAccount(account))!.balanceMicros;
}

async function settled(account: string, before: number): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const now = await balance(account);
    if (now !== before) return before - now;
    await new Promise((r) => setTimeout(r, 20));
  }
  return 0;
}

describe('POST /v1/audio/speech', () => {
  it('streams a real WAV back and charges its seconds', async () => {
    const before = await balance('acct');
    const input = 'Hello there, this is a test of the speech endpoint.'; // 51 characters: 4 s at the mock's rate
    const response = await client.audio.speech.create({ model: 'mock-tts', voice: 'alloy', input, response_format: 'wav' });
    expect(response.headers.get('content-type')).toBe('audio/wav');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    const audio = Buffer.from(await response.arrayBuffer());
    expect(audio.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(wavDurationSeconds(audio, audio.length)).toBe(4);
    expect(await settled('acct', before)).toBe(40_000); // 4 s at 0.01 credits
  });

  it('under an Idempotency-Key, runs a speech whose caller left mid-audio to its end: the resend gets all of it, charged once', async () => {
    const before = await balance('acct');
    const key = `speech-left-${Date.now()}`;
    const body = JSON.stringify({ model: 'mock-tts', voice: 'alloy', input: 'x'.repeat(600), response_format: 'wav' }); // 40 s: 640 KB
    const send = (signal?: AbortSignal): Promise<Response> =>
      fetch(`${gw.baseURL}/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json', 'idempotency-key': key }, body, signal });
    const leaving = new AbortController();
    const first = await send(leaving.signal);
    expect(first.status).toBe(200);
    await first.body!.getReader().read();
    leaving.abort();
    let resent: Response | undefined;
    for (let i = 0; i < 100; i++) {
      resent = await send();
      if (resent.status === 200) break;
      expect(resent.status).toBe(409);
      await resent.arrayBuffer();
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(resent!.headers.get('idempotent-replayed')).toBe('true');
    const audio = Buffer.from(await resent!.arrayBuffer());
    expect(wavDurationSeconds(audio, audio.length)).toBe(40);
    expect(await settled('acct', before)).toBe(400_000); // 40 s at 0.01 credits, once
  });

  it('answers raw PCM for pcm, charged by its length', async () => {
    const before = await balance('acct');
    const response = await client.audio.speech.create({ model: 'mock-tts', voice: 'alloy', input: 'short', response_format: 'pcm' });
    expect(response.headers.get('content-type')).toBe('audio/pcm');
    expect((await response.arrayBuffer()).byteLength).toBe(48_000); // one second at 24 kHz, 16-bit
    expect(await settled('acct', before)).toBe(10_000);
  });

  it('takes a custom voice by its id, as the SDK sends it', async () => {
    const response = await client.audio.speech.create({ model: 'mock-tts', voice: { id: 'voice_1234' }, input: 'short', response_format: 'pcm' });
    expect((await response.arrayBuffer()).byteLength).toBe(48_000);
  });

  it('refuses a bad request naming the field', async () => {
    for (const [body, param] of [
      [{ model: 'mock-tts', voice: 'alloy' }, 'input'],
      [{ model: 'mock-tts', voice: 'alloy', input: 'x'.repeat(4097) }, 'input'],
      [{ model: 'mock-tts', voice: 'alloy', input: 'hi', speed: 9 }, 'speed'],
      [{ model: 'mock-tts', voice: 'alloy', input: 'hi', response_format: 'mp4' }, 'response_format'],
      [{ model: 'mock-tts', voice: { name: 'x' }, input: 'hi' }, 'voice.id'],
    ] as const) {
      const error = await errorOf(await post('/audio/speech', body));
      expect([error.status, error.body.error.param]).toEqual([400, param]);
    }
  });

  it('is 404 for an unknown model, 422 for a model without speech, 501 where no adapter implements it', async () => {
    expect((await errorOf(await post('/audio/speech', { model: 'nope', voice: 'alloy', input: 'hi' }))).body.error.code).toBe('model_not_found');
    const missing = await errorOf(await post('/audio/speech', { model: 'mock-chat', voice: 'alloy', input: 'hi' }));
    expect([missing.status, missing.body.error.code]).toEqual([422, 'model_capability_missing']);
    const unimplemented = await errorOf(await post('/audio/speech', { model: 'claude-tts', voice: 'alloy', input: 'hi' }));
    expect([unimplemented.status, unimplemented.body.error.type]).toEqual([501, 'server_error']);
    expect(unimplemented.body.error.message).toMatch(/speech/);
    expect(unimplemented.body.error.message).toMatch(/claude-tts/);
  });

  it('counts against the audio daily cap', async () => {
    const capped = (): Promise<Response> => post('/audio/speech', { model: 'mock-tts', voice: 'alloy', input: 'hi' }, gw.keys.capped);
    const first = await capped();
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    const second = await errorOf(await capped());
    expect([second.status, second.body.error.code]).toEqual([429, 'daily_cap_exceeded']);
  });
});

describe('POST /v1/audio/transcriptions', () => {
  it('transcribes an uploaded WAV and charges its seconds', async () => {
    const before = await balance('acct');
    const wav = toneWav(3);
    const result = await client.audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(wav, 'hello.wav', { type: 'audio/wav' }) });
    expect(result.text).toBe(`Mock transcription of hello.wav (${wav.length} bytes).`);
    expect(await settled('acct', before)).toBe(30_000);
  });

  it('charges a WAV of compressed samples by its size, not by the byte rate its header claims', async () => {
    const before = await balance('acct');
    const forged = toneWav(4);
    forged.writeUInt16LE(0x0055, 20); // MPEG Layer 3 samples: the header's byte rate is then the only rate given
    forged.writeUInt32LE(0xffffffff, 28);
    const sized = Buffer.concat([forged, Buffer.alloc(80_000 - forged.length)]);
    await client.audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(sized, 'forged.wav', { type: 'audio/wav' }), response_format: 'text' });
    expect(await settled('acct', before)).toBe(50_000); // 80 KB at 128 kbit/s: 5 s at 0.01 credits
  });

  it('takes what a diarizing model takes: diarized_json, server_vad chunking and known speakers, and refuses them malformed', async () => {
    const file = async () => toFile(toneWav(2), 'two.wav', { type: 'audio/wav' });
    const diarized = (await client.audio.transcriptions.create({
      model: 'mock-whisper',
      file: await file(),
      response_format: 'diarized_json',
      chunking_strategy: { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 200 },
      known_speaker_names: ['Ann'],
      known_speaker_references: ['data:audio/wav;base64,UklGRg=='],
    })) as unknown as { duration: number; segments: Array<{ speaker: string }> };
    expect(diarized.duration).toBe(2);
    expect(diarized.segments[0]?.speaker).toBe('Ann');
    const send = async (fields: Record<string, string>) => {
      const form = new FormData();
      form.set('model', 'mock-whisper');
      for (const [name, value] of Object.entries(fields)) form.set(name, value);
      form.set('file', new Blob([toneWav(1)], { type: 'audio/wav' }), 'one.wav');
      return errorOf(await fetch(`${gw.baseURL}/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}` }, body: form }));
    };
    for (const [fields, param] of [
      [{ 'chunking_strategy[type]': 'fixed' }, 'chunking_strategy[type]'],
      [{ 'chunking_strategy[threshold]': '0.5' }, 'chunking_strategy[type]'],
      [{ 'chunking_strategy[type]': 'server_vad', 'chunking_strategy[threshold]': '2' }, 'chunking_strategy[threshold]'],
      [{ 'known_speaker_names[]': 'Ann' }, 'known_speaker_references'],
      [{ 'known_speaker_names[]': 'Ann', 'known_speaker_references[]': 'https://example.com/ann.wav' }, 'known_speaker_references'],
    ] as const) {
      const refused = await send(fields);
      expect([refused.status, refused.body.error.param]).toEqual([400, param]);
    }
  });

  it('answers in every response format', async () => {
    const file = async () => toFile(toneWav(2), 'two.wav', { type: 'audio/wav' });
    const text = await client.audio.transcriptions.create({ model: 'mock-whisper', file: await file(), response_format: 'text' });
    expect(String(text)).toMatch(/^Mock transcription of two\.wav/);
    const verbose = await client.audio.transcriptions.create({ model: 'mock-whisper', file: await file(), response_format: 'verbose_json', timestamp_granularities: ['word'] });
    expect(verbose.duration).toBe(2);
    expect(verbose.words?.length).toBeGreaterThan(0);
    const srt = await client.audio.transcriptions.create({ model: 'mock-whisper', file: await file(), response_format: 'srt' });
    expect(String(srt)).toMatch(/00:00:00,000 --> 00:00:02,000/);
  });

  it('takes an earlier upload by file_id, and 404s another account\'s or an unknown one', async () => {
    const upload = await client.files.create({ file: await toFile(toneWav(1), 'one.wav', { type: 'audio/wav' }), purpose: 'user_data' });
    const form = new FormData();
    form.set('model', 'mock-whisper');
    form.set('file_id', upload.id);
    const response = await fetch(`${gw.baseURL}/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}` }, body: form });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { text: string }).text).toMatch(/one\.wav/);

    const foreign = new FormData();
    foreign.set('model', 'mock-whisper');
    foreign.set('file_id', upload.id);
    const other = await errorOf(await fetch(`${gw.baseURL}/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.capped}` }, body: foreign }));
    expect([other.status, other.body.error.code, other.body.error.param]).toEqual([404, 'file_not_found', 'file_id']);
  });

  it('refuses what is not a proper form, naming the field', async () => {
    const noFile = new FormData();
    noFile.set('model', 'mock-whisper');
    expect((await errorOf(await postForm(noFile))).body.error.param).toBe('file');
    const noModel = new FormData();
    noModel.set('file', new Blob([toneWav(1)]), 'a.wav');
    expect((await errorOf(await postForm(noModel))).body.error.param).toBe('model');
    const badFormat = new FormData();
    badFormat.set('model', 'mock-whisper');
    badFormat.set('response_format', 'xml');
    badFormat.set('file', new Blob([toneWav(1)]), 'a.wav');
    expect((await errorOf(await postForm(badFormat))).body.error.param).toBe('response_format');
    const json = await errorOf(await post('/audio/transcriptions', { model: 'mock-whisper' }));
    expect([json.status, json.body.error.code]).toEqual([400, 'unsupported_content_type']);
  });

  it('is 413 for audio over the upload limit, and keeps nothing of it', async () => {
    const form = new FormData();
    form.set('model', 'mock-whisper');
    form.set('file', new Blob([Buffer.alloc(2 * 1024 * 1024, 1)]), 'big.wav');
    const error = await errorOf(await postForm(form));
    expect([error.status, error.body.error.code, error.body.error.param]).toEqual([413, 'file_too_large', 'file']);
  });

  it('is 501 where no adapter implements transcription', async () => {
    const form = new FormData();
    form.set('model', 'claude-tts');
    form.set('file', new Blob([toneWav(1)]), 'a.wav');
    const error = await errorOf(await postForm(form));
    expect([error.status, error.body.error.code]).toEqual([501, 'capability_not_implemented']);
  });
});

function post(path: string, body: unknown, key = gw.keys.main!): Promise<Response> {
  return fetch(`${gw.baseURL}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

function postForm(form: FormData, key = gw.keys.main!): Promise<Response> {
  return fetch(`${gw.baseURL}/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
}
