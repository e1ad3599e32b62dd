import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bytesFile, generatedFile, generatedSha256, stalledFile } from '../../../test/fakes/input-files.js';
import { formValues, type FakeForm } from '../../../test/fakes/multipart-form.js';
import { fakeAudioSeconds, fakeTranscript, fakeTranscriptionTokens } from '../../../test/fakes/openai-audio.js';
import { FAKE_OPENAI_KEY, startFakeOpenAI, type FakeOpenAI } from '../../../test/fakes/openai-server.js';
import { listenLocal } from '../../../test/support/local-server.js';
import type { ProviderConfig } from '../../config/schema.js';
import { GatewayError } from '../../errors/index.js';
import type { TranscriptionRequest } from '../../protocol/audio.js';
import { Cancellation, type CancelSignal } from '../../util/cancellation.js';
import type { InputFile, ProviderAdapter, TranscriptionCall } from '../types.js';
import { createOpenAIAdapter } from './adapter.js';
import { transcriptionResult } from './transcriptions.js';

const AUDIO = Buffer.from(Array.from({ length: 48_000 }, (_, i) => (i * 13) & 0xff));

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

function transcriptionCall(
  request: Partial<TranscriptionRequest> = {},
  options: { file?: InputFile; upstreamModel?: string; signal?: CancelSignal } = {},
): TranscriptionCall {
  return {
    request: { model: 'public-stt', ...request },
    file: options.file ?? bytesFile(AUDIO, 'meeting.wav', 'audio/wav'),
    upstreamModel: options.upstreamModel ?? 'whisper-1',
    signal: options.signal ?? new Cancellation().signal,
    requestId: 'req-test',
  };
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

async function rawServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res));
  });
  const local = await listenLocal(server);
  return { url: `${local.origin}/v1`, close: () => local.close() };
}

function lastForm(): FakeForm {
  const body = fake.requests.at(-1)?.body as FakeForm | undefined;
  expect(body?.kind).toBe('multipart');
  return body!;
}

let fake: FakeOpenAI;
let adapter: ProviderAdapter;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  adapter = createOpenAIAdapter(providerConfig(fake.url), { connectTimeoutMs: 2_000 });
});

afterAll(async () => {
  await adapter.close();
  await fake.close();
});

afterEach(() => {
  fake.behave({ kind: 'ok' });
  fake.requests.length = 0;
});

describe('OpenAI adapter: transcription request', () => {
  it('sends every field as the openai SDK names it, the model replaced, and the file intact', async () => {
    await adapter.transcription!(
      transcriptionCall({ language: 'en', prompt: 'A "board" meeting.', response_format: 'verbose_json', temperature: 0.2, timestamp_granularities: ['word', 'segment'], include: ['logprobs'], chunking_strategy: 'auto' }),
    );
    const sent = fake.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/audio/transcriptions');
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(sent.headers['content-length']).toBeDefined();
    expect(sent.headers['transfer-encoding']).toBeUndefined();
    expect(sent.headers.authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`);
    const form = lastForm();
    expect(form.fields).toEqual([
      ['model', 'whisper-1'],
      ['language', 'en'],
      ['prompt', 'A "board" meeting.'],
      ['response_format', 'verbose_json'],
      ['temperature', '0.2'],
      ['timestamp_granularities[]', 'word'],
      ['timestamp_granularities[]', 'segment'],
      ['include[]', 'logprobs'],
      ['chunking_strategy', 'auto'],
    ]);
    expect(form.files).toHaveLength(1);
    expect(form.files[0]).toMatchObject({ field: 'file', filename: 'meeting.wav', contentType: 'audio/wav', size: AUDIO.length });
    expect(form.files[0]!.head.equals(AUDIO.subarray(0, 64))).toBe(true);
  });

  it('sends server_vad chunking and known speakers as the openai SDK names them', async () => {
    await adapter.transcription!(
      transcriptionCall({
        chunking_strategy: { type: 'server_vad', threshold: 0.4, silence_duration_ms: 300 },
        known_speaker_names: ['Ann', 'Bob'],
        known_speaker_references: ['data:audio/wav;base64,UklG', 'data:audio/wav;base64,UklH'],
      }),
    );
    expect(lastForm().fields).toEqual([
      ['model', 'whisper-1'],
      ['chunking_strategy[type]', 'server_vad'],
      ['chunking_strategy[threshold]', '0.4'],
      ['chunking_strategy[silence_duration_ms]', '300'],
      ['known_speaker_names[]', 'Ann'],
      ['known_speaker_names[]', 'Bob'],
      ['known_speaker_references[]', 'data:audio/wav;base64,UklG'],
      ['known_speaker_references[]', 'data:audio/wav;base64,UklH'],
    ]);
  });

  it('sends only the model and the file when the caller set nothing else', async () => {
    await adapter.transcription!(transcriptionCall());
    expect(lastForm().fields).toEqual([['model', 'whisper-1']]);
  });

  it('streams a 20 MB file to the upstream, every byte in order', async () => {
    const size = 20 * 1024 * 1024;
    const file = generatedFile(size, 'long-recording.wav');
    const result = await adapter.transcription!(transcriptionCall({}, { file }));
    expect(JSON.parse(result.body).text).toBe(fakeTranscript(size));
    const received = lastForm().files[0]!;
    expect(received.size).toBe(size);
    expect(received.sha256).toBe(generatedSha256(size));
    // Read exactly once, as it was sent.
    expect(file.produced).toBe(size);
    expect(file.streams).toHaveLength(1);
  });

  it('reads the file anew for a second call with it (a failover)', async () => {
    const file = bytesFile(AUDIO);
    await adapter.transcription!(transcriptionCall({}, { file }));
    await adapter.transcription!(transcriptionCall({}, { file }));
    expect(fake.requests.map((r) => (r.body as FakeForm).files[0]?.size)).toEqual([AUDIO.length, AUDIO.length]);
  });
});

describe('OpenAI adapter: transcription formats', () => {
  it('json (whisper-1): the body as received, seconds from usage.seconds', async () => {
    const result = await adapter.transcription!(transcriptionCall({ response_format: 'json' }));
    expect(result.contentType).toBe('application/json');
    expect(JSON.parse(result.body)).toEqual({ text: fakeTranscript(AUDIO.length), usage: { type: 'duration', seconds: Math.ceil(fakeAudioSeconds(AUDIO.length)) } });
    expect(result.seconds).toBe(Math.ceil(fakeAudioSeconds(AUDIO.length)));
    expect(result.promptTokens).toBeUndefined();
    expect(result.completionTokens).toBeUndefined();
  });

  it('the default format is json', async () => {
    const result = await adapter.transcription!(transcriptionCall());
    expect(JSON.parse(result.body).text).toBe(fakeTranscript(AUDIO.length));
    expect(result.seconds).toBe(Math.ceil(fakeAudioSeconds(AUDIO.length)));
  });

  it('json (gpt-4o-transcribe): tokens from usage, no seconds', async () => {
    const result = await adapter.transcription!(transcriptionCall({ response_format: 'json' }, { upstreamModel: 'gpt-4o-transcribe' }));
    const tokens = fakeTranscriptionTokens(AUDIO.length);
    expect(JSON.parse(result.body).usage).toMatchObject({ type: 'tokens', input_tokens: tokens.input, output_tokens: tokens.output });
    expect(result.promptTokens).toBe(tokens.input);
    expect(result.completionTokens).toBe(tokens.output);
    expect(result.seconds).toBeNull();
  });

  it('verbose_json: seconds from duration; segments and words relayed', async () => {
    const result = await adapter.transcription!(transcriptionCall({ response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'] }));
    expect(result.contentType).toBe('application/json');
    const body = JSON.parse(result.body);
    expect(body).toMatchObject({ task: 'transcribe', language: 'english', duration: fakeAudioSeconds(AUDIO.length), text: fakeTranscript(AUDIO.length) });
    expect(body.segments).toHaveLength(1);
    expect(body.words.length).toBeGreaterThan(1);
    expect(result.seconds).toBe(fakeAudioSeconds(AUDIO.length));
    expect(formValues(lastForm(), 'timestamp_granularities[]')).toEqual(['word', 'segment']);
  });

  it('text: the text as is, as text/plain, without seconds', async () => {
    const result = await adapter.transcription!(transcriptionCall({ response_format: 'text' }));
    expect(result.body).toBe(`${fakeTranscript(AUDIO.length)}\n`);
    expect(result.contentType).toBe('text/plain; charset=utf-8');
    expect(result.seconds).toBeNull();
  });

  it('srt: subtitles as is, without seconds', async () => {
    const result = await adapter.transcription!(transcriptionCall({ response_format: 'srt' }));
    expect(result.body).toMatch(/^1\n00:00:00,000 --> 00:00:0\d,\d{3}\n/);
    expect(result.body).toContain(fakeTranscript(AUDIO.length));
    expect(result.contentType).toBe('text/plain; charset=utf-8');
    expect(result.seconds).toBeNull();
  });

  it('vtt: subtitles as is, without seconds', async () => {
    const result = await adapter.transcription!(transcriptionCall({ response_format: 'vtt' }));
    expect(result.body).toMatch(/^WEBVTT\n\n00:00:00\.000 --> /);
    expect(result.body).toContain(fakeTranscript(AUDIO.length));
    expect(result.seconds).toBeNull();
  });

  it('a JSON format answered with what is not JSON is upstream_malformed_response', async () => {
    fake.behave({ kind: 'malformed' });
    for (const format of ['json', 'verbose_json'] as const) {
      const error = await failure(adapter.transcription!(transcriptionCall({ response_format: format })));
      expect(error.code).toBe('upstream_malformed_response');
      expect(error.status).toBe(502);
    }
  });
});

describe('transcriptionResult', () => {
  it('ignores usage values that are not amounts, and keeps an upstream content type', () => {
    const result = transcriptionResult('p', undefined, '{"text":"hi","usage":{"type":"tokens","input_tokens":-1,"output_tokens":"3"}}', 'application/json; charset=utf-8');
    expect(result).toEqual({ body: '{"text":"hi","usage":{"type":"tokens","input_tokens":-1,"output_tokens":"3"}}', contentType: 'application/json; charset=utf-8', seconds: null });
  });

  it('defaults the content type by format when the upstream sends none', () => {
    expect(transcriptionResult('p', undefined, '{"text":"hi"}', undefined, 'json').contentType).toBe('application/json');
    expect(transcriptionResult('p', undefined, 'hi', undefined, 'srt').contentType).toBe('text/plain; charset=utf-8');
  });

  it('a JSON answer without text is malformed, or the error it carries', () => {
    expect(() => transcriptionResult('p', undefined, '{"segments":[]}', undefined)).toThrow(/without text/);
    const error = (() => {
      try {
        transcriptionResult('p', 'sk-secret', '{"error":{"message":"decoder failed for sk-secret"}}', undefined);
      } catch (err) {
        return err as GatewayError;
      }
      throw new Error('expected a failure');
    })();
    expect(error.code).toBe('upstream_error');
    expect(error.message).toContain('decoder failed for [redacted]');
  });
});

describe('OpenAI adapter: transcription errors', () => {
  it('a format the model does not support (400) is upstream_rejected_request with its param', async () => {
    const error = await failure(adapter.transcription!(transcriptionCall({ response_format: 'srt' }, { upstreamModel: 'gpt-4o-mini-transcribe' })));
    expect(error.code).toBe('upstream_rejected_request');
    expect(error.status).toBe(400);
    expect(error.param).toBe('response_format');
    expect(error.message).toContain("response_format 'srt' is not compatible");
  });

  it('an empty file (400) is upstream_rejected_request', async () => {
    const error = await failure(adapter.transcription!(transcriptionCall({}, { file: bytesFile(Buffer.alloc(0)) })));
    expect(error.code).toBe('upstream_rejected_request');
    expect(error.param).toBe('file');
  });

  it('upstream 429 is upstream_unavailable with Retry-After, after the whole upload', async () => {
    fake.behave({ kind: 'error', status: 429, type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached.', retryAfter: '12' });
    const error = await failure(adapter.transcription!(transcriptionCall()));
    expect(error.code).toBe('upstream_unavailable');
    expect(error.retryAfterSeconds).toBe(12);
  });

  it('a refused key is upstream_auth_failed, without the key in the message', async () => {
    const wrongKey = 'sk-wrong-0123456789abcdefghijklmnopqrstuvwxyz';
    const wrong = createOpenAIAdapter(providerConfig(fake.url, { api_key: wrongKey }), { connectTimeoutMs: 2_000 });
    try {
      const error = await failure(wrong.transcription!(transcriptionCall()));
      expect(error.code).toBe('upstream_auth_failed');
      expect(error.message).not.toContain(wrongKey);
      expect(error.message).not.toContain('wxyz');
    } finally {
      await wrong.close();
    }
  });

  it('a file shorter than recorded fails the call as internal_error instead of sending a cut upload', async () => {
    const error = await failure(adapter.transcription!(transcriptionCall({}, { file: generatedFile(1000, 'f.wav', 'audio/wav', undefined, 5000) })));
    expect(error.code).toBe('internal_error');
  });

  it('aborting mid-upload ends the call with the abort reason and closes the file', async () => {
    const file = stalledFile(Buffer.alloc(64 * 1024, 1), 1024 * 1024);
    const controller = new Cancellation();
    const reason = new GatewayError('upstream_timeout', 'total budget spent');
    setTimeout(() => controller.abort(reason), 100);
    expect(await failure(adapter.transcription!(transcriptionCall({}, { file, signal: controller.signal })))).toBe(reason);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(file.streams).toHaveLength(1);
    expect(file.streams[0]!.destroyed).toBe(true);
  });

  it('aborting while waiting for the answer ends the call with the abort reason', async () => {
    fake.behave({ kind: 'hang' });
    const controller = new Cancellation();
    const reason = new GatewayError('upstream_timeout', 'first byte deadline passed');
    setTimeout(() => controller.abort(reason), 50);
    expect(await failure(adapter.transcription!(transcriptionCall({}, { signal: controller.signal })))).toBe(reason);
  });

  it('a closed port is upstream_unreachable', async () => {
    const server = await rawServer(() => undefined);
    const url = server.url;
    await server.close();
    const dead = createOpenAIAdapter(providerConfig(url), { connectTimeoutMs: 2_000 });
    try {
      expect((await failure(dead.transcription!(transcriptionCall()))).code).toBe('upstream_unreachable');
    } finally {
      await dead.close();
    }
  });
});
