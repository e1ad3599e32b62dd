import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_SPEECH_CONTENT_TYPES, fakeSpeechAudio } from '../../../test/fakes/openai-audio.js';
import { FAKE_OPENAI_KEY, startFakeOpenAI, type FakeOpenAI } from '../../../test/fakes/openai-server.js';
import { listenLocal } from '../../../test/support/local-server.js';
import type { ProviderConfig } from '../../config/schema.js';
import { GatewayError } from '../../errors/index.js';
import { SPEECH_CONTENT_TYPES, SPEECH_FORMATS, type SpeechRequest } from '../../protocol/audio.js';
import { Cancellation, type CancelSignal } from '../../util/cancellation.js';
import type { ProviderAdapter, SpeechCall } from '../types.js';
import { createOpenAIAdapter } from './adapter.js';

const UPSTREAM_MODEL = 'gpt-4o-mini-tts';
const INPUT = 'The quick brown fox jumps over the lazy dog.';

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

function speechCall(request: Partial<SpeechRequest> = {}, signal: CancelSignal = new Cancellation().signal): SpeechCall {
  return { request: { model: 'public-tts', input: INPUT, voice: 'alloy', ...request }, upstreamModel: UPSTREAM_MODEL, signal, requestId: 'req-test' };
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

async function collect(audio: AsyncIterable<Uint8Array>, into: Buffer[] = []): Promise<Buffer[]> {
  for await (const chunk of audio) into.push(Buffer.from(chunk));
  return into;
}

async function rawServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res));
  });
  const local = await listenLocal(server);
  return { url: `${local.origin}/v1`, close: () => local.close() };
}

let fake: FakeOpenAI;
let adapter: ProviderAdapter;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  adapter = createOpenAIAdapter(providerConfig(fake.url, { headers: { 'OpenAI-Organization': 'org-tollgate' } }), { connectTimeoutMs: 2_000 });
});

afterAll(async () => {
  await adapter.close();
  await fake.close();
});

afterEach(() => {
  fake.behave({ kind: 'ok' });
  fake.requests.length = 0;
});

describe('OpenAI adapter: speech', () => {
  it('sends the JSON body with only the model replaced, asking for audio, with the provider headers', async () => {
    const result = await adapter.speech!(speechCall({ instructions: 'Speak slowly.', speed: 1.25, response_format: 'wav', some_future_field: { a: 1 } }));
    await collect(result.audio);
    expect(fake.requests).toHaveLength(1);
    const sent = fake.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/audio/speech');
    expect(sent.body).toEqual({ model: UPSTREAM_MODEL, input: INPUT, voice: 'alloy', instructions: 'Speak slowly.', speed: 1.25, response_format: 'wav', some_future_field: { a: 1 } });
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers.accept).toBe('application/octet-stream');
    expect(sent.headers.authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`);
    expect(sent.headers['openai-organization']).toBe('org-tollgate');
  });

  for (const format of SPEECH_FORMATS) {
    it(`relays ${format} audio byte for byte with the upstream's content type`, async () => {
      const result = await adapter.speech!(speechCall({ response_format: format }));
      expect(result.contentType).toBe(FAKE_SPEECH_CONTENT_TYPES[format]);
      const audio = Buffer.concat(await collect(result.audio));
      expect(audio.equals(fakeSpeechAudio(format, INPUT))).toBe(true);
    });
  }

  it('relays the audio as it arrives, in several pieces; a WAV is a real RIFF file', async () => {
    const result = await adapter.speech!(speechCall({ response_format: 'wav' }));
    const pieces = await collect(result.audio);
    expect(pieces.length).toBeGreaterThan(1);
    const wav = Buffer.concat(pieces);
    expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
    expect(wav.toString('latin1', 8, 12)).toBe('WAVE');
    expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
    expect(wav.readUInt32LE(24)).toBe(24_000);
  });

  it('defaults to mp3 bytes when no format is given', async () => {
    const result = await adapter.speech!(speechCall());
    expect(result.contentType).toBe('audio/mpeg');
    expect(Buffer.concat(await collect(result.audio)).equals(fakeSpeechAudio('mp3', INPUT))).toBe(true);
  });

  it("falls back to the format's content type when the upstream sends none", async () => {
    const server = await rawServer((_req, res) => {
      res.writeHead(200);
      res.end(Buffer.from([1, 2, 3]));
    });
    const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
    try {
      for (const format of [undefined, 'flac', 'opus'] as const) {
        const result = await raw.speech!(speechCall(format === undefined ? {} : { response_format: format }));
        expect(result.contentType).toBe(SPEECH_CONTENT_TYPES[format ?? 'mp3']);
        expect(Buffer.concat(await collect(result.audio))).toEqual(Buffer.from([1, 2, 3]));
      }
    } finally {
      await raw.close();
      await server.close();
    }
  });

  it('lets the caller stop listening early without breaking later requests', async () => {
    const result = await adapter.speech!(speechCall({ response_format: 'pcm' }));
    for await (const _chunk of result.audio) break;
    const again = await adapter.speech!(speechCall({ response_format: 'pcm' }));
    expect(Buffer.concat(await collect(again.audio)).equals(fakeSpeechAudio('pcm', INPUT))).toBe(true);
  });
});

describe('OpenAI adapter: speech errors', () => {
  it('an empty input rejected upstream (400) is upstream_rejected_request with the message and param', async () => {
    const error = await failure(adapter.speech!(speechCall({ input: '' })));
    expect(error.code).toBe('upstream_rejected_request');
    expect(error.status).toBe(400);
    expect(error.message).toContain("Invalid 'input': empty string");
    expect(error.param).toBe('input');
  });

  it('a missing voice (400) is upstream_rejected_request', async () => {
    const error = await failure(adapter.speech!(speechCall({ voice: '' })));
    expect(error.code).toBe('upstream_rejected_request');
    expect(error.param).toBe('voice');
  });

  it('upstream 429 is upstream_unavailable with Retry-After', async () => {
    fake.behave({ kind: 'error', status: 429, type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached.', retryAfter: '7' });
    const error = await failure(adapter.speech!(speechCall()));
    expect(error.code).toBe('upstream_unavailable');
    expect(error.status).toBe(503);
    expect(error.retryAfterSeconds).toBe(7);
  });

  it('upstream 500 is upstream_error', async () => {
    fake.behave({ kind: 'error', status: 500, type: 'server_error', code: null, message: 'The server had an error.' });
    const error = await failure(adapter.speech!(speechCall()));
    expect(error.code).toBe('upstream_error');
    expect(error.status).toBe(502);
  });

  it('a refused key is upstream_auth_failed, without the key in the message', async () => {
    const wrongKey = 'sk-wrong-0123456789abcdefghijklmnopqrstuvwxyz';
    const wrong = createOpenAIAdapter(providerConfig(fake.url, { api_key: wrongKey }), { connectTimeoutMs: 2_000 });
    try {
      const error = await failure(wrong.speech!(speechCall()));
      expect(error.code).toBe('upstream_auth_failed');
      expect(error.status).toBe(502);
      expect(error.message).not.toContain(wrongKey);
    } finally {
      await wrong.close();
    }
  });

  it('a connection dropped mid-audio ends iteration with upstream_stream_truncated after the bytes sent', async () => {
    fake.behave({ kind: 'cut_stream', afterChunks: 2 });
    const result = await adapter.speech!(speechCall({ response_format: 'wav' }));
    const pieces: Buffer[] = [];
    const error = await failure(collect(result.audio, pieces));
    expect(error.code).toBe('upstream_stream_truncated');
    const full = fakeSpeechAudio('wav', INPUT);
    const received = Buffer.concat(pieces);
    expect(received.length).toBeGreaterThan(0);
    expect(received.length).toBeLessThan(full.length);
    expect(received.equals(full.subarray(0, received.length))).toBe(true);
  });

  it('a JSON error under a 200 status is upstream_error with its message, scrubbed of the key', async () => {
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `voice backend down for ${FAKE_OPENAI_KEY}`, type: 'server_error' } }));
    });
    const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
    try {
      const error = await failure(raw.speech!(speechCall()));
      expect(error.code).toBe('upstream_error');
      expect(error.message).toContain('voice backend down for [redacted]');
      expect(error.message).not.toContain(FAKE_OPENAI_KEY);
    } finally {
      await raw.close();
      await server.close();
    }
  });

  it('aborting while waiting for the upstream ends the call with the abort reason', async () => {
    fake.behave({ kind: 'hang' });
    const controller = new Cancellation();
    const reason = new GatewayError('upstream_timeout', 'first byte deadline passed');
    setTimeout(() => controller.abort(reason), 50);
    expect(await failure(adapter.speech!(speechCall({}, controller.signal)))).toBe(reason);
  });

  it('aborting mid-audio ends iteration with the abort reason', async () => {
    const server = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.write(Buffer.from('ID3 first bytes'));
    });
    const raw = createOpenAIAdapter(providerConfig(server.url), { connectTimeoutMs: 2_000 });
    try {
      const controller = new Cancellation();
      const result = await raw.speech!(speechCall({}, controller.signal));
      const reason = new GatewayError('upstream_timeout', 'idle deadline passed');
      setTimeout(() => controller.abort(reason), 50);
      const pieces: Buffer[] = [];
      expect(await failure(collect(result.audio, pieces))).toBe(reason);
      expect(Buffer.concat(pieces).toString()).toBe('ID3 first bytes');
    } finally {
      await raw.close();
      await server.close();
    }
  });
});
