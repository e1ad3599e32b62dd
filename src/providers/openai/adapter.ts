/**
 * The adapter for OpenAI and every server that speaks its chat-completions API (vLLM, Ollama,
 * llama.cpp, ...). Requests and answers are already in the gateway's own format, so the work here
 * is relaying bytes and spotting failures, as cheaply as possible: this is the hot path.
 */
import type { ProviderConfig } from '../../config/schema.js';
import type { ChatCompletion } from '../../protocol/chat.js';
import type {
  AdapterOptions, ChatCall, ChatResult, ChatStream, EmbeddingsCall, EmbeddingsResult, ImageEditCall, ImagesCall, ImagesResult, ProviderAdapter, SpeechCall, SpeechResult,
  TranscriptionCall, TranscriptionResult,
} from '../types.js';
import { EMBEDDINGS_PATH, embeddingsBody, embeddingsResult } from './embeddings.js';
import { IMAGES_PATH, imagesBody, imagesResult } from './images.js';
import { IMAGE_EDITS_PATH, imageEditForm } from './image-edits.js';
import { multipartHeaders, type MultipartBody } from './multipart-body.js';
import { SPEECH_ACCEPT, SPEECH_PATH, speechBody, speechResult } from './speech.js';
import { TRANSCRIPTIONS_PATH, TRANSLATIONS_PATH, transcriptionForm, transcriptionResult } from './transcriptions.js';
import { createOpenAIVideoJobs } from './videos.js';
import { embeddingsInputCount } from '../../protocol/embeddings-tokens.js';
import { UpstreamClient, errorBodyText, headerValue, readBodyText, type UpstreamResponse } from '../upstream/upstream-client.js';
import { chatBody, streamBody } from './request-body.js';
import { errorDetail, malformed, reportedError, statusError, statusErrorOf } from './errors.js';
import { OpenAIChatStream } from './stream.js';
import { usageOf } from './usage.js';
import type { CancelSignal } from '../../util/cancellation.js';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
const PATH = '/chat/completions';

export function createOpenAIAdapter(provider: ProviderConfig, options: AdapterOptions): ProviderAdapter {
  const client = new UpstreamClient({
    baseUrl: provider.base_url ?? OPENAI_DEFAULT_BASE_URL,
    connectTimeoutMs: options.connectTimeoutMs,
    maxConnections: provider.max_connections,
  });
  const apiKey = provider.api_key === '' ? undefined : provider.api_key;
  const ownHeaders = upstreamHeaders(provider, apiKey);
  const headers = UpstreamClient.headers(ownHeaders);
  const speechHeaders = UpstreamClient.headers({ accept: SPEECH_ACCEPT, ...ownHeaders });
  const providerId = provider.id;

  async function send(body: string, signal: CancelSignal, path = PATH, sendHeaders = headers): Promise<UpstreamResponse> {
    return accepted(await client.post(path, body, sendHeaders, signal), signal);
  }

  /** A JSON POST whose 2xx answer is wanted whole, as text. */
  async function sendForText(body: string, signal: CancelSignal, path: string): Promise<string> {
    const answer = await client.postForText(path, body, headers, signal);
    if (answer.status < 200 || answer.status >= 300) throw statusErrorOf(providerId, apiKey, answer.status, answer.headers, answer.text);
    return answer.text;
  }

  async function sendForm(form: MultipartBody, signal: CancelSignal, path: string): Promise<UpstreamResponse> {
    return accepted(await client.postStream(path, form.body, multipartHeaders(headers, form), signal), signal);
  }

  async function accepted(res: UpstreamResponse, signal: CancelSignal): Promise<UpstreamResponse> {
    if (res.status < 200 || res.status >= 300) throw await statusError(providerId, apiKey, res, signal);
    return res;
  }

  return {
    id: providerId,
    kind: provider.kind,

    // Any capability may be served by some OpenAI-compatible server; whether this model has it
    // is the catalogue's decision, not the adapter's.
    implements: () => true,

    async chat(call: ChatCall): Promise<ChatResult> {
      const text = await sendForText(chatBody(call, provider.output_cap_field), call.signal, PATH);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        throw malformed(providerId, 'a completion that is not valid JSON', err);
      }
      if (!isCompletion(parsed)) {
        // Some proxies answer 200 with an error body; its message is worth more than "malformed".
        if (typeof parsed === 'object' && parsed !== null && 'error' in parsed) throw reportedError(providerId, apiKey, errorDetail(parsed));
        throw malformed(providerId, 'a completion without choices of the chat shape (each with a message)');
      }
      return { completion: parsed, rawJson: text, usage: usageOf(parsed.usage) };
    },

    async chatStream(call: ChatCall): Promise<ChatStream> {
      const res = await client.postForStream(PATH, streamBody(call, provider.output_cap_field), headers, call.signal);
      if (res.status < 200 || res.status >= 300) {
        throw statusErrorOf(providerId, apiKey, res.status, res.headers, await errorBodyText(res, call.signal));
      }
      const type = headerValue(res.headers, 'content-type');
      if (type === undefined || !isEventStream(type)) {
        res.body.discard();
        throw malformed(providerId, `a streaming answer with content-type "${type ?? 'none'}" instead of text/event-stream`);
      }
      return new OpenAIChatStream(res, { providerId, apiKey, signal: call.signal });
    },

    async embeddings(call: EmbeddingsCall): Promise<EmbeddingsResult> {
      const text = await sendForText(embeddingsBody(call), call.signal, EMBEDDINGS_PATH);
      return embeddingsResult(providerId, apiKey, text, embeddingsInputCount(call.request.input));
    },

    async images(call: ImagesCall): Promise<ImagesResult> {
      const text = await sendForText(imagesBody(call), call.signal, IMAGES_PATH);
      return { images: await imagesResult(providerId, apiKey, text, call.signal) };
    },

    async imageEdit(call: ImageEditCall): Promise<ImagesResult> {
      const res = await sendForm(imageEditForm(call), call.signal, IMAGE_EDITS_PATH);
      return { images: await imagesResult(providerId, apiKey, await readBodyText(res, call.signal), call.signal) };
    },

    async speech(call: SpeechCall): Promise<SpeechResult> {
      return speechResult(providerId, apiKey, await send(speechBody(call), call.signal, SPEECH_PATH, speechHeaders), call);
    },

    async transcription(call: TranscriptionCall): Promise<TranscriptionResult> {
      const res = await sendForm(transcriptionForm(call), call.signal, call.task === 'translate' ? TRANSLATIONS_PATH : TRANSCRIPTIONS_PATH);
      const contentType = headerValue(res.headers, 'content-type');
      return transcriptionResult(providerId, apiKey, await readBodyText(res, call.signal), contentType, call.request.response_format);
    },

    videos: createOpenAIVideoJobs({ client, providerId, apiKey, headers: ownHeaders }),

    close: () => client.close(),
  };
}

/**
 * Built once per provider: the per-request cost is undici's own copy. Names are lower-cased so
 * that an operator's `Authorization` replaces ours instead of being sent alongside it.
 */
function upstreamHeaders(provider: ProviderConfig, apiKey: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;
  for (const [name, value] of Object.entries(provider.headers ?? {})) headers[name.toLowerCase()] = value;
  return headers;
}

/**
 * The shape the pipeline reads of a completion: choices, each with a message whose tool calls (if
 * any) name a function. Anything else (a legacy `text` choice, a call without its function) is an
 * unusable answer, a fault of the route, not something to read blindly.
 */
function isCompletion(value: unknown): value is ChatCompletion {
  if (typeof value !== 'object' || value === null) return false;
  const choices = (value as { choices?: unknown }).choices;
  return Array.isArray(choices) && choices.every(isChoice);
}

function isChoice(choice: unknown): boolean {
  const message = (choice as { message?: unknown } | null)?.message;
  if (typeof message !== 'object' || message === null) return false;
  const calls = (message as { tool_calls?: unknown }).tool_calls;
  if (calls === undefined || calls === null) return true;
  return Array.isArray(calls) && calls.every((call: unknown) => {
    const fn = (call as { function?: unknown } | null)?.function as { name?: unknown; arguments?: unknown } | undefined;
    return typeof fn === 'object' && fn !== null && typeof fn.name === 'string' && typeof fn.arguments === 'string';
  });
}

function isEventStream(contentType: string): boolean {
  return contentType.trimStart().toLowerCase().startsWith('text/event-stream');
}
