/**
 * The chat-completions pipeline, free of HTTP: check the request against the model and the caller,
 * choose a route, call the adapter under the request's deadlines, and hand back either a JSON body
 * or a stream of SSE frames. Errors before the answer starts are thrown as GatewayError; errors
 * after a stream started become one error frame.
 */
import { GatewayError, toGatewayError } from '../errors/index.js';
import { assertModelAllowed } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import type { CatalogModel, ModelCatalog } from '../catalog/model-catalog.js';
import type { ChatCompletionRequest, Usage } from '../protocol/chat.js';
import { estimateMessagesTokens } from '../protocol/token-estimate.js';
import type { Router } from '../routing/router.js';
import type { ChatStream } from '../providers/types.js';
import { validateChatRequest } from '../validation/chat-request.js';
import { CallDeadlines, type DeadlineSettings } from './deadlines.js';
import { requiredCapabilities, type Requirement } from './required-capabilities.js';
import { DONE_FRAME, dataFrame, errorFrame } from './sse-frames.js';
import { ClientClosedError } from './client-closed.js';
import type { Cancellation } from '../util/cancellation.js';

export interface ChatCallContext {
  requestId: string;
  principal: Principal;
  /** The request's one controller: aborted when the caller goes away or a deadline passes. */
  controller: Cancellation;
}

export interface ServedBy {
  provider: string;
  upstreamModel: string;
}

export type ChatOutcome =
  | { kind: 'json'; body: string; usage: Usage | null; servedBy: ServedBy }
  | { kind: 'stream'; frames: AsyncIterable<string>; usage: () => Usage | null; servedBy: ServedBy };

export interface ChatServiceOptions {
  catalog: ModelCatalog;
  router: Router;
  deadlines: DeadlineSettings;
  /** Called with every fault that is the gateway's own (500), for the log. */
  onInternalError: (requestId: string, err: unknown) => void;
}

export class ChatService {
  constructor(private readonly options: ChatServiceOptions) {}

  async complete(body: unknown, ctx: ChatCallContext): Promise<ChatOutcome> {
    const request = validateChatRequest(body);
    const model = this.options.catalog.get(request.model);
    if (model === undefined) {
      throw new GatewayError('model_not_found', `The model "${request.model}" does not exist. Check the id against GET /v1/models.`, { param: 'model' });
    }
    assertModelAllowed(ctx.principal, model.id);
    const needs = requiredCapabilities(request);
    checkAgainstModel(request, model, needs);

    const route = this.options.router.pick(model, needs);
    const servedBy = { provider: route.adapter.id, upstreamModel: route.upstreamModel };
    const deadlines = new CallDeadlines(ctx.controller, this.options.deadlines);
    const call = {
      request,
      upstreamModel: route.upstreamModel,
      signal: ctx.controller.signal,
      requestId: ctx.requestId,
      defaultMaxTokens: model.config.max_output_tokens,
    };
    try {
      if (request.stream === true) {
        const stream = await route.adapter.chatStream(call);
        deadlines.streamStarted();
        const includeUsage = request.stream_options?.include_usage === true;
        return { kind: 'stream', frames: this.frames(stream, includeUsage, deadlines, ctx), usage: () => stream.usage, servedBy };
      }
      const result = await route.adapter.chat(call);
      deadlines.clear();
      return { kind: 'json', body: result.rawJson ?? JSON.stringify(result.completion), usage: result.usage, servedBy };
    } catch (err) {
      deadlines.clear();
      throw err;
    }
  }

  private async *frames(stream: ChatStream, includeUsage: boolean, deadlines: CallDeadlines, ctx: ChatCallContext): AsyncGenerator<string> {
    try {
      for await (const batch of stream) {
        deadlines.progress();
        let frames = '';
        for (const piece of batch) if (piece.usageOnly !== true || includeUsage) frames += dataFrame(piece.data);
        if (frames !== '') yield frames;
      }
      yield DONE_FRAME;
    } catch (err) {
      if (ctx.controller.signal.reason instanceof ClientClosedError) return;
      const error = toGatewayError(err);
      if (error.status === 500) this.options.onInternalError(ctx.requestId, err);
      yield errorFrame(error);
    } finally {
      deadlines.clear();
    }
  }
}

/** Rules that need the model: capabilities, the output cap and the context window. */
function checkAgainstModel(request: ChatCompletionRequest, model: CatalogModel, needs: readonly Requirement[]): void {
  for (const { capability, param } of needs) {
    if (!model.capabilities.has(capability)) {
      throw new GatewayError('model_capability_missing', `The model "${model.id}" does not support ${capability} (needed by ${param}).`, { param });
    }
  }
  const limit = model.config.max_output_tokens;
  const maxField = request.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
  const maxOutput = request.max_completion_tokens ?? request.max_tokens ?? null;
  if (maxOutput !== null && maxOutput > limit) {
    throw new GatewayError('invalid_parameter', `${maxField} is too large: ${maxOutput}. The model "${model.id}" produces at most ${limit} output tokens.`, { param: maxField });
  }
  const prompt = estimateMessagesTokens(request.messages);
  const window = model.config.context_window;
  if (prompt + (maxOutput ?? 0) > window) {
    const asked = maxOutput === null ? '' : ` plus ${maxField} (${maxOutput})`;
    throw new GatewayError(
      'context_length_exceeded',
      `The prompt (about ${prompt} tokens)${asked} exceeds the context window of the model "${model.id}" (${window} tokens). Shorten the messages${maxOutput === null ? '' : ` or lower ${maxField}`}.`,
      { param: maxOutput === null ? 'messages' : maxField },
    );
  }
}
