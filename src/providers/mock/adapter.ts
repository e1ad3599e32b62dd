/**
 * The built-in mock provider: deterministic, in-process, no network. Used by the quick start and
 * by tests. Its options (providers[].mock in the config) simulate latency, slow streaming, upstream
 * error statuses, malformed bodies, hangs, broken streams and missing capabilities, through the
 * same error mapping as the real adapters. Besides chat it answers embeddings, images, speech,
 * transcriptions and video jobs with small but real outputs (see the files beside this one).
 */
import { GatewayError } from '../../errors/index.js';
import type { MockOptions, ProviderConfig } from '../../config/schema.js';
import type { Capability } from '../../protocol/capabilities.js';
import type { ChatCompletion, ChatCompletionChunk, Usage } from '../../protocol/chat.js';
import { estimateMessagesTokens } from '../../protocol/token-estimate.js';
import { upstreamFault, upstreamStatusError } from '../upstream/upstream-faults.js';
import { sleep, type CancelSignal } from '../../util/cancellation.js';
import type {
  ChatCall, ChatResult, ChatStream, EmbeddingsCall, EmbeddingsResult, ImageEditCall, ImagesCall, ImagesResult, ProviderAdapter, SpeechCall, SpeechResult, StreamPiece,
  TranscriptionCall, TranscriptionResult, VideoCall, VideoJobs,
} from '../types.js';
import { mockEmbeddings } from './embeddings.js';
import { mockImages } from './images.js';
import { mockSpeech } from './speech.js';
import { mockTranscription } from './transcription.js';
import { mockVideoJobs } from './videos.js';
import { estimateEmbeddingsTokens } from '../../protocol/embeddings-tokens.js';
import { mockChoice, type MockChoice } from './reply.js';

const DEFAULTS: MockOptions = { latency_ms: 0, chunk_delay_ms: 0, malformed: false, hang: false, crash: false, missing_capabilities: [], video_ms: 3_000, video_fail: false };

function wait(ms: number, signal: CancelSignal): Promise<void> {
  return sleep(ms, signal, (cancelled) => upstreamFault(cancelled.reason, cancelled));
}

function usageOf(call: ChatCall, choices: MockChoice[]): Usage {
  const prompt = estimateMessagesTokens(call.request.messages);
  const completion = choices.reduce((sum, c) => sum + c.words.length + (c.toolCall ? 1 : 0), 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

export function createMockAdapter(provider: ProviderConfig): ProviderAdapter {
  const options = { ...DEFAULTS, ...provider.mock };
  const missing = new Set<Capability>(options.missing_capabilities);
  let requests = 0;
  /** Whether this request gets the configured faults: all do, or only the first `faulty_requests`. */
  const faulty = (): boolean => options.faulty_requests === undefined || requests++ < options.faulty_requests;

  /** Everything that happens before the mock "answers": latency, hangs and error statuses. */
  async function answerOrFail(call: ChatCall, faults: boolean): Promise<MockChoice[]> {
    if (options.latency_ms > 0) await wait(options.latency_ms, call.signal);
    if (faults) await fail(call);
    const n = call.request.n ?? 1;
    return Array.from({ length: n }, () => mockChoice(call.request, call.requestId, options.reply));
  }

  async function fail(call: { signal: CancelSignal }): Promise<void> {
    if (options.hang) await wait(2 ** 31 - 1, call.signal);
    if (options.fail_status !== undefined) {
      throw upstreamStatusError(provider.id, options.fail_status, options.fail_message ?? 'mock failure', options.retry_after_seconds?.toString());
    }
    if (options.crash) throw new Error('simulated fault inside the mock adapter');
    if (options.malformed) throw new GatewayError('upstream_malformed_response', `Provider "${provider.id}" returned a body that is not a chat completion.`);
  }

  /** What every call but chat goes through before the mock answers: latency, then the faults. */
  async function beforeAnswer(call: { signal: CancelSignal }): Promise<void> {
    if (options.latency_ms > 0) await wait(options.latency_ms, call.signal);
    if (faulty()) await fail(call);
  }

  // Only creating a job meets the faults: polling and downloading are the gateway's own schedule,
  // and a mock that failed them would fail jobs the configuration says complete.
  const videoJobs = mockVideoJobs(options);
  const videos: VideoJobs = {
    ...videoJobs,
    async create(call: VideoCall) {
      await beforeAnswer(call);
      return videoJobs.create(call);
    },
  };

  return {
    id: provider.id,
    kind: 'mock',

    implements(capability: Capability): boolean {
      return !missing.has(capability);
    },

    async chat(call: ChatCall): Promise<ChatResult> {
      const choices = await answerOrFail(call, faulty());
      const usage = usageOf(call, choices);
      const completion: ChatCompletion = {
        id: `chatcmpl-mock-${call.requestId}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: call.upstreamModel,
        choices: choices.map((c, index) => ({
          index,
          message: { role: 'assistant', content: c.toolCall ? null : c.words.join(' '), ...(c.toolCall ? { tool_calls: [c.toolCall] } : {}), refusal: null },
          finish_reason: c.finishReason,
          logprobs: null,
        })),
        usage,
        system_fingerprint: 'fp_tollgate_mock',
      };
      return { completion, usage };
    },

    async chatStream(call: ChatCall): Promise<ChatStream> {
      const faults = faulty();
      const choices = await answerOrFail(call, faults);
      const finalUsage = usageOf(call, choices);
      const head = { id: `chatcmpl-mock-${call.requestId}`, object: 'chat.completion.chunk' as const, created: Math.floor(Date.now() / 1000), model: call.upstreamModel };
      const chunk = (index: number, delta: ChatCompletionChunk['choices'][number]['delta'], finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null): StreamPiece => ({
        data: JSON.stringify({ ...head, choices: [{ index, delta, finish_reason: finish, logprobs: null }] }),
      });
      let usage: Usage = { prompt_tokens: finalUsage.prompt_tokens, completion_tokens: 0, total_tokens: finalUsage.prompt_tokens };

      // One piece a batch: the mock's chunks arrive one by one, like a slow real stream.
      async function* pieces(): AsyncGenerator<StreamPiece[]> {
        let sent = 0;
        const beforeChunk = async (): Promise<void> => {
          if (faults && options.break_after_chunks !== undefined && sent >= options.break_after_chunks) {
            throw new GatewayError('upstream_stream_truncated', `Provider "${provider.id}" ended the stream before it was complete.`);
          }
          if (faults && options.error_after_chunks !== undefined && sent >= options.error_after_chunks) {
            throw new GatewayError('upstream_error', `Provider "${provider.id}" reported an error in the stream: mock failure`);
          }
          if (sent > 0 && options.chunk_delay_ms > 0) await wait(options.chunk_delay_ms, call.signal);
          if (call.signal.aborted) throw upstreamFault(call.signal.reason, call.signal);
          sent++;
        };
        for (const [index, choice] of choices.entries()) {
          await beforeChunk();
          yield [chunk(index, { role: 'assistant', content: choice.toolCall ? null : '' })];
          if (choice.toolCall) {
            await beforeChunk();
            const { id, type, function: fn } = choice.toolCall;
            yield [chunk(index, { tool_calls: [{ index: 0, id, type, function: { name: fn.name, arguments: fn.arguments } }] })];
            usage = { ...usage, completion_tokens: usage.completion_tokens + 1, total_tokens: usage.total_tokens + 1 };
          }
          for (const [i, word] of choice.words.entries()) {
            await beforeChunk();
            yield [chunk(index, { content: i === 0 ? word : ` ${word}` })];
            usage = { ...usage, completion_tokens: usage.completion_tokens + 1, total_tokens: usage.total_tokens + 1 };
          }
          await beforeChunk();
          yield [chunk(index, {}, choice.finishReason)];
        }
        yield [{ data: JSON.stringify({ ...head, choices: [], usage }), usageOnly: true }];
      }

      const generator = pieces();
      return {
        get usage() {
          return usage;
        },
        [Symbol.asyncIterator]: () => generator,
      };
    },

    async embeddings(call: EmbeddingsCall): Promise<EmbeddingsResult> {
      await beforeAnswer(call);
      return { vectors: mockEmbeddings(call.request.input, call.request.dimensions), promptTokens: estimateEmbeddingsTokens(call.request.input) };
    },

    async images(call: ImagesCall): Promise<ImagesResult> {
      await beforeAnswer(call);
      return mockImages(call.request);
    },

    // An edit is painted as a generation is: the mock does not read pictures.
    async imageEdit(call: ImageEditCall): Promise<ImagesResult> {
      await beforeAnswer(call);
      return mockImages(call.request);
    },

    async speech(call: SpeechCall): Promise<SpeechResult> {
      await beforeAnswer(call);
      return mockSpeech(call);
    },

    async transcription(call: TranscriptionCall): Promise<TranscriptionResult> {
      await beforeAnswer(call);
      return mockTranscription(call);
    },

    videos,

    close(): Promise<void> {
      return Promise.resolve();
    },
  };
}
