/**
 * The Google Gemini provider adapter: OpenAI chat and embeddings calls served by the Gemini API
 * (POST {base_url}/models/{model}:generateContent, :streamGenerateContent?alt=sse, :embedContent,
 * :batchEmbedContents). Translation lives in request/response/stream/embeddings; this file only
 * moves bytes and decides when a response counts as accepted.
 */
import type { ProviderConfig } from '../../config/schema.js';
import type { Capability } from '../../protocol/capabilities.js';
import type { Usage } from '../../protocol/chat.js';
import type { CancelSignal } from '../../util/cancellation.js';
import type { AdapterOptions, ChatCall, ChatResult, ChatStream, EmbeddingsCall, EmbeddingsResult, ProviderAdapter, StreamPiece } from '../types.js';
import { UpstreamClient, errorBodyText, headerValue } from '../upstream/upstream-client.js';
import type { StreamedAnswer } from '../upstream/dispatched-call.js';
import { sseEvents } from '../upstream/sse.js';
import { readVectors, toEmbedCalls } from './embeddings.js';
import { geminiStatusError, malformed, type ErrorContext } from './errors.js';
import { toGenerateContentRequest } from './request.js';
import { toChatCompletion } from './response.js';
import { StreamTranslator, translateStream } from './stream.js';

export const DEFAULT_GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

const IMPLEMENTED: ReadonlySet<Capability> = new Set<Capability>(['chat', 'streaming', 'tools', 'vision', 'json_mode', 'embeddings']);

export function createGeminiAdapter(provider: ProviderConfig, options: AdapterOptions): ProviderAdapter {
  const client = new UpstreamClient({
    baseUrl: provider.base_url ?? DEFAULT_GEMINI_BASE_URL,
    connectTimeoutMs: options.connectTimeoutMs,
    maxConnections: provider.max_connections,
  });
  const apiKey = provider.api_key === '' ? undefined : provider.api_key;
  const headers = UpstreamClient.headers(requestHeaders(provider, apiKey));
  const errors: ErrorContext = { providerId: provider.id, apiKey };

  /** Sends a streamed request; any non-2xx becomes the mapped GatewayError, with Gemini's own message. */
  async function sendForStream(path: string, body: string, signal: CancelSignal): Promise<StreamedAnswer> {
    const res = await client.postForStream(path, body, headers, signal);
    if (res.status >= 200 && res.status < 300) return res;
    throw geminiStatusError(errors, res.status, await errorBodyText(res, signal), headerValue(res.headers, 'retry-after'));
  }

  /** A request whose 2xx answer is wanted whole, as text; any other status becomes the mapped GatewayError. */
  async function sendForText(path: string, body: string, signal: CancelSignal): Promise<string> {
    const answer = await client.postForText(path, body, headers, signal);
    if (answer.status < 200 || answer.status >= 300) throw geminiStatusError(errors, answer.status, answer.text, headerValue(answer.headers, 'retry-after'));
    return answer.text;
  }

  return {
    id: provider.id,
    kind: provider.kind,
    implements(capability: Capability): boolean {
      return IMPLEMENTED.has(capability);
    },
    async chat(call: ChatCall): Promise<ChatResult> {
      const body = JSON.stringify(toGenerateContentRequest(call));
      const text = await sendForText(`${modelPath(call.upstreamModel)}:generateContent`, body, call.signal);
      const completion = toChatCompletion(text, { ...errors, upstreamModel: call.upstreamModel, created: unixNow() });
      return { completion, usage: completion.usage ?? null };
    },
    async chatStream(call: ChatCall): Promise<ChatStream> {
      const body = JSON.stringify(toGenerateContentRequest(call));
      const res = await sendForStream(`${modelPath(call.upstreamModel)}:streamGenerateContent?alt=sse`, body, call.signal);
      // Without alt=sse honoured, Gemini streams one JSON array; anything but SSE is unusable here.
      const type = headerValue(res.headers, 'content-type');
      if (type === undefined || !type.trimStart().toLowerCase().startsWith('text/event-stream')) {
        res.body.discard();
        throw malformed(provider.id, `a streaming answer with content-type "${type ?? 'none'}" instead of text/event-stream`);
      }
      const translator = new StreamTranslator({ ...errors, upstreamModel: call.upstreamModel, created: unixNow() });
      const pieces = translateStream(sseEvents(res.body, call.signal), translator);
      let first: IteratorResult<StreamPiece[]>;
      try {
        // Gemini may accept with a 200 and then report an error as its first event (overload):
        // waiting for the first chunk lets such a refusal still become an HTTP error status.
        first = await pieces.next();
      } catch (err) {
        res.body.destroy();
        throw err;
      }
      return new GeminiChatStream(res, translator, first, pieces);
    },
    async embeddings(call: EmbeddingsCall): Promise<EmbeddingsResult> {
      const vectors: number[][] = [];
      // Batches go one after another: simpler to cancel and to fail cleanly, and a caller with
      // more than 100 inputs is after throughput, not latency.
      for (const embed of toEmbedCalls(call.request, modelResource(call.upstreamModel))) {
        const text = await sendForText(`${modelPath(call.upstreamModel)}:${embed.method}`, JSON.stringify(embed.body), call.signal);
        vectors.push(...readVectors(errors, text, embed));
      }
      return { vectors, promptTokens: null };
    },
    async close(): Promise<void> {
      await client.close();
    },
  };
}

/**
 * Operator headers first, so that the key cannot be overridden by accident; names are lower-cased
 * so that a differently-cased duplicate cannot sneak in. The key goes in a header rather than the
 * `?key=` query Gemini also accepts, which would put it in every URL that gets logged.
 */
function requestHeaders(provider: ProviderConfig, apiKey: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(provider.headers)) headers[name.toLowerCase()] = value;
  if (apiKey !== undefined) headers['x-goog-api-key'] = apiKey;
  return headers;
}

/** `gemini-2.5-flash` → `models/gemini-2.5-flash`; a full resource name (`tunedModels/x`) is kept as is. */
export function modelResource(upstreamModel: string): string {
  return upstreamModel.includes('/') ? upstreamModel : `models/${upstreamModel}`;
}

function modelPath(upstreamModel: string): string {
  return `/${modelResource(upstreamModel).split('/').map(encodeURIComponent).join('/')}`;
}

function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}

class GeminiChatStream implements ChatStream {
  private started = false;

  constructor(
    private readonly res: StreamedAnswer,
    private readonly translator: StreamTranslator,
    private readonly first: IteratorResult<StreamPiece[]>,
    private readonly rest: AsyncGenerator<StreamPiece[]>,
  ) {}

  get usage(): Usage | null {
    return this.translator.usage;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<StreamPiece[]> {
    // The body can only be read once; a second reader would see an empty, "truncated" stream.
    if (this.started) throw new Error('A Gemini stream can only be iterated once.');
    this.started = true;
    try {
      if (this.first.done !== true) yield this.first.value;
      yield* this.rest;
    } finally {
      // On early exit the connection is abandoned rather than drained: the rest of a generation
      // can be long. (After the end there is nothing left to abandon: the connection is kept.)
      this.res.body.destroy();
    }
  }
}
