/**
 * The contract between the request pipeline and a provider adapter. Adapters speak the OpenAI
 * chat format on this side and their provider's wire format on the other; they know nothing of
 * HTTP routes, keys or limits. Faults are thrown as GatewayError (see src/errors).
 */
import type { Capability } from '../protocol/capabilities.js';
import type { ChatCompletion, ChatCompletionRequest, Usage } from '../protocol/chat.js';
import type { EmbeddingsRequest } from '../protocol/embeddings.js';
import type { ImagesRequest } from '../protocol/images.js';
import type { SpeechRequest, TranscriptionRequest } from '../protocol/audio.js';
import type { VideoCreateRequest, VideoError } from '../protocol/videos.js';
import type { CancelSignal } from '../util/cancellation.js';

export interface ChatCall {
  /** The caller's validated request. `model` is still the public id; use `upstreamModel` upstream. */
  readonly request: ChatCompletionRequest;
  readonly upstreamModel: string;
  /** Aborted when the caller goes away or a deadline passes: stop all upstream work at once. */
  readonly signal: CancelSignal;
  readonly requestId: string;
  /** Output cap to send when the caller gave none: the model's `max_output_tokens`. */
  readonly defaultMaxTokens: number;
}

export interface ChatResult {
  readonly completion: ChatCompletion;
  /** The upstream body exactly as received, when it is already the OpenAI shape: relayed as is. */
  readonly rawJson?: string;
  readonly usage: Usage | null;
}

/** One SSE event for the caller: the JSON text of an OpenAI `chat.completion.chunk`. */
export interface StreamPiece {
  readonly data: string;
  /** The usage-only final chunk; relayed only if the caller asked for `stream_options.include_usage`. */
  readonly usageOnly?: boolean;
  /** Completion tokens the chunk carries, when the adapter knows better than the default of one per chunk. */
  readonly tokens?: number;
}

/**
 * The chunks one upstream read delivered. `wire`, when the adapter gives it: the bytes read that
 * are exactly the first `wire.pieces` chunks written as caller frames (`data: <data>` and a blank
 * line each), which the relay may write as they are instead of encoding the frames again.
 */
export type StreamBatch = readonly StreamPiece[] & { readonly wire?: WireBytes };

export interface WireBytes {
  readonly bytes: Uint8Array;
  readonly pieces: number;
}

/**
 * A started stream. Iterating yields the chunks in batches, one batch for what one upstream read
 * delivered (never empty), because each step through an async iterator costs more than relaying
 * a chunk. The iterator ends after the upstream's proper end and throws a GatewayError when the
 * upstream fails or cuts the stream without a proper end.
 */
export interface ChatStream extends AsyncIterable<StreamBatch> {
  /** Usage as last reported by the upstream (complete once iteration ended). */
  readonly usage: Usage | null;
}

export interface EmbeddingsCall {
  /** The caller's validated request. `model` is still the public id; use `upstreamModel` upstream. */
  readonly request: EmbeddingsRequest;
  readonly upstreamModel: string;
  readonly signal: CancelSignal;
  readonly requestId: string;
}

export interface EmbeddingsResult {
  /** One vector per input, in input order (empty when `rawJson` is given). */
  readonly vectors: ReadonlyArray<ArrayLike<number>>;
  /** Prompt tokens as the upstream counted them, or null when it does not say. */
  readonly promptTokens: number | null;
  /**
   * The upstream body exactly as received, when it is already OpenAI's response in the caller's
   * `encoding_format`: relayed as is.
   */
  readonly rawJson?: string;
}

export interface ImagesCall {
  /** The caller's validated request; `response_format` is the gateway's business, not the adapter's. */
  readonly request: ImagesRequest;
  readonly upstreamModel: string;
  readonly signal: CancelSignal;
  readonly requestId: string;
}

/** An image edit (POST /v1/images/edits): the request's text fields, the picture to edit and its mask. */
export interface ImageEditCall extends ImagesCall {
  readonly image: InputFile;
  /** Transparent where the picture is to change (a PNG the picture's size). */
  readonly mask?: InputFile;
}

export interface GeneratedImage {
  readonly data: Buffer;
  readonly contentType: string;
  readonly revisedPrompt?: string;
}

export interface ImagesResult {
  readonly images: readonly GeneratedImage[];
}

/** A file the caller sent, kept in the blob store while calls use it. */
export interface InputFile {
  readonly filename: string;
  readonly contentType: string;
  readonly size: number;
  /** Opens the bytes for reading; may be called more than once (a failover reads the file again). */
  open(): Promise<NodeJS.ReadableStream>;
}

export interface SpeechCall {
  readonly request: SpeechRequest;
  readonly upstreamModel: string;
  readonly signal: CancelSignal;
  readonly requestId: string;
}

export interface SpeechResult {
  /** The content type of the audio (`audio/mpeg`, `audio/wav`, ...). */
  readonly contentType: string;
  /** The audio, relayed to the caller as it arrives; ends or throws (GatewayError) when the upstream does. */
  readonly audio: AsyncIterable<Uint8Array>;
}

export interface TranscriptionCall {
  /** The caller's form fields; `model` is still the public id. */
  readonly request: TranscriptionRequest;
  /** `translate`: into English (POST /v1/audio/translations); else in the audio's own language. */
  readonly task?: 'transcribe' | 'translate';
  readonly file: InputFile;
  readonly upstreamModel: string;
  readonly signal: CancelSignal;
  readonly requestId: string;
}

export interface TranscriptionResult {
  /** The answer in the caller's `response_format` (JSON or text), relayed as is. */
  readonly body: string;
  readonly contentType: string;
  /** Seconds of audio, when the upstream says (`duration`, or `usage.seconds`); null otherwise. */
  readonly seconds: number | null;
  /** Tokens, when the upstream bills transcription by tokens (`usage.input_tokens` / `output_tokens`). */
  readonly promptTokens?: number;
  readonly completionTokens?: number;
}

export interface VideoCall {
  /** The caller's validated request; `model` is still the public id. */
  readonly request: VideoCreateRequest;
  /** An image or video that guides generation (`input_reference`), if the caller sent one. */
  readonly reference?: InputFile;
  readonly upstreamModel: string;
  readonly signal: CancelSignal;
  readonly requestId: string;
}

/** A video job as the upstream reports it. */
export interface UpstreamVideoJob {
  /** The upstream's id for the job, kept by Tollgate to poll it. */
  readonly id: string;
  readonly status: 'queued' | 'in_progress' | 'completed' | 'failed';
  /** 0 to 100. */
  readonly progress: number;
  readonly error?: VideoError;
}

/** One job at the upstream, as Tollgate remembers it across restarts. */
export interface VideoJobRef {
  readonly upstreamId: string;
  readonly upstreamModel: string;
  readonly signal: CancelSignal;
}

export interface VideoContent {
  readonly contentType: string;
  readonly body: AsyncIterable<Uint8Array>;
}

/** Video generation as asynchronous jobs at the upstream. */
export interface VideoJobs {
  create(call: VideoCall): Promise<UpstreamVideoJob>;
  /** Throws `upstream_rejected_request` when the upstream no longer knows the job (polling then stops). */
  retrieve(job: VideoJobRef): Promise<UpstreamVideoJob>;
  /** The finished video's bytes (MP4). */
  content(job: VideoJobRef): Promise<VideoContent>;
  /** Stops the job upstream, or deletes it where the provider cannot stop one. Best effort. */
  cancel(job: VideoJobRef): Promise<void>;
}

export interface ProviderAdapter {
  /** The provider id from the configuration. */
  readonly id: string;
  readonly kind: string;
  /** Whether this adapter can serve a capability (for this upstream model). */
  implements(capability: Capability, upstreamModel: string): boolean;
  /** Non-streaming completion. */
  chat(call: ChatCall): Promise<ChatResult>;
  /**
   * Streaming completion. Resolves once the upstream has accepted the request, so that a refusal
   * still becomes an HTTP error status; later faults surface while iterating.
   */
  chatStream(call: ChatCall): Promise<ChatStream>;
  /** Embeddings; absent when the adapter implements none (`implements('embeddings')` is then false). */
  embeddings?(call: EmbeddingsCall): Promise<EmbeddingsResult>;
  /** Image generation; absent when the adapter implements none. The images come back as bytes. */
  images?(call: ImagesCall): Promise<ImagesResult>;
  /** Image editing (a picture and a prompt, a mask optional); absent when the adapter implements none. */
  imageEdit?(call: ImageEditCall): Promise<ImagesResult>;
  /** Text to speech; absent when the adapter implements none. */
  speech?(call: SpeechCall): Promise<SpeechResult>;
  /** Speech to text from an uploaded file; absent when the adapter implements none. */
  transcription?(call: TranscriptionCall): Promise<TranscriptionResult>;
  /** Video generation jobs; absent when the adapter implements none. */
  readonly videos?: VideoJobs;
  /** Release pooled connections. */
  close(): Promise<void>;
}

/** Settings every HTTP adapter receives besides its provider's own configuration. */
export interface AdapterOptions {
  readonly connectTimeoutMs: number;
}
