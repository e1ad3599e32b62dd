/**
 * The Anthropic provider adapter: OpenAI chat calls served by Anthropic's Messages API
 * (POST {base_url}/messages). Translation lives in request/response/stream; this file only
 * moves bytes and decides when a response counts as accepted.
 */
import type { ProviderConfig } from '../../config/schema.js';
import type { Capability } from '../../protocol/capabilities.js';
import type { Usage } from '../../protocol/chat.js';
import type { AdapterOptions, ChatCall, ChatResult, ChatStream, ProviderAdapter, StreamPiece } from '../types.js';
import { UpstreamClient, errorBodyText, headerValue } from '../upstream/upstream-client.js';
import type { StreamedAnswer } from '../upstream/dispatched-call.js';
import { sseEvents } from '../upstream/sse.js';
import { anthropicStatusError } from './errors.js';
import { toMessagesRequest } from './request.js';
import { toChatCompletion } from './response.js';
import { StreamTranslator, translateStream } from './stream.js';

export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';

const IMPLEMENTED: ReadonlySet<Capability> = new Set<Capability>(['chat', 'streaming', 'tools', 'vision']);

export function createAnthropicAdapter(provider: ProviderConfig, options: AdapterOptions): ProviderAdapter {
  const client = new UpstreamClient({
    baseUrl: provider.base_url ?? DEFAULT_ANTHROPIC_BASE_URL,
    connectTimeoutMs: options.connectTimeoutMs,
    maxConnections: provider.max_connections,
  });
  const headers = UpstreamClient.headers(requestHeaders(provider));

  /** Sends a streamed request; any non-2xx becomes the mapped GatewayError, with Anthropic's own message. */
  async function sendForStream(call: ChatCall): Promise<StreamedAnswer> {
    const res = await client.postForStream('/messages', JSON.stringify(toMessagesRequest(call, true)), headers, call.signal);
    if (res.status >= 200 && res.status < 300) return res;
    throw anthropicStatusError(provider.id, res.status, await errorBodyText(res, call.signal), headerValue(res.headers, 'retry-after'));
  }

  /** A request whose 2xx answer is wanted whole, as text; any other status becomes the mapped GatewayError. */
  async function sendForText(call: ChatCall): Promise<string> {
    const answer = await client.postForText('/messages', JSON.stringify(toMessagesRequest(call, false)), headers, call.signal);
    if (answer.status < 200 || answer.status >= 300) throw anthropicStatusError(provider.id, answer.status, answer.text, headerValue(answer.headers, 'retry-after'));
    return answer.text;
  }

  return {
    id: provider.id,
    kind: provider.kind,
    implements(capability: Capability): boolean {
      return IMPLEMENTED.has(capability);
    },
    async chat(call: ChatCall): Promise<ChatResult> {
      const completion = toChatCompletion(await sendForText(call), call.upstreamModel, unixNow());
      return { completion, usage: completion.usage ?? null };
    },
    async chatStream(call: ChatCall): Promise<ChatStream> {
      const res = await sendForStream(call);
      const translator = new StreamTranslator({ providerId: provider.id, upstreamModel: call.upstreamModel, created: unixNow() });
      const pieces = translateStream(sseEvents(res.body, call.signal), translator);
      let first: IteratorResult<StreamPiece[]>;
      try {
        // Anthropic may accept with a 200 and then refuse in its first event (overload): waiting
        // for message_start lets such a refusal still become an HTTP error status for the caller.
        first = await pieces.next();
      } catch (err) {
        res.body.destroy();
        throw err;
      }
      return new AnthropicChatStream(res, translator, first, pieces);
    },
    async close(): Promise<void> {
      await client.close();
    },
  };
}

/**
 * Operator headers first, so that the key and the pinned API version cannot be overridden by
 * accident; names are lower-cased so that a differently-cased duplicate cannot sneak in.
 */
function requestHeaders(provider: ProviderConfig): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(provider.headers)) headers[name.toLowerCase()] = value;
  if (provider.api_key !== undefined && provider.api_key !== '') headers['x-api-key'] = provider.api_key;
  headers['anthropic-version'] = provider.anthropic_version;
  return headers;
}

function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}

class AnthropicChatStream implements ChatStream {
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
    if (this.started) throw new Error('An Anthropic stream can only be iterated once.');
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
