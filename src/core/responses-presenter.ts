/**
 * Shows a chat completion, or its stream, as a Responses API answer: a `response` object, or the
 * Responses event stream (`response.created` … `response.completed`). Deterministic for one
 * request (ids from the request id, times from the completion), so that the stream recorded for an
 * Idempotency-Key, translated again from the chat frames, is byte for byte what was sent.
 */
import type { ChatCompletion, ChatCompletionChunk, FinishReason, ToolCall, Usage } from '../protocol/chat.js';
import type { ResponseFunctionCallItem, ResponseMessageItem, ResponseObject, ResponseOutputItem, ResponseUsage } from '../protocol/responses.js';
import type { GatewayError } from '../errors/index.js';
import { inResponsesTerms } from '../validation/responses-request.js';

/** How an answer is shown when the caller's API is not chat completions; applied to what is sent and to what is recorded. */
export interface AnswerPresenter {
  /** The completion's JSON, as the caller's API shows it; `usage` is what was counted when the completion has none. */
  json(completion: string, usage: Usage): string;
  /** A whole stream as sent, from the chat frames it was made of. */
  transcript(frames: string): string;
  /** An error answered after the request was translated, naming the fields the caller sent. */
  error(err: GatewayError): GatewayError;
}

/** The request's settings a response echoes, as OpenAI's do (defaults where the caller gave none). */
function echoOf(body: Record<string, unknown>): Record<string, unknown> {
  return {
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: typeof body.previous_response_id === 'string' ? body.previous_response_id : null,
    reasoning: { effort: (body.reasoning as { effort?: unknown } | undefined)?.effort ?? null, summary: null },
    store: body.store !== false,
    temperature: body.temperature ?? null,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? null,
    truncation: 'disabled',
    user: body.user ?? null,
  };
}

function usageOf(usage: Usage | null | undefined): ResponseUsage | null {
  if (usage == null) return null;
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
  };
}

function incompleteOf(finish: FinishReason | null): ResponseObject['incomplete_details'] {
  if (finish === 'length') return { reason: 'max_output_tokens' };
  if (finish === 'content_filter') return { reason: 'content_filter' };
  return null;
}

export class ResponsesPresenter implements AnswerPresenter {
  private readonly base: string;
  private readonly echo: Record<string, unknown>;
  /** The response shown by `json`, for keeping. */
  private shownResponse: ResponseObject | null = null;

  constructor(requestId: string, body: Record<string, unknown>) {
    this.base = requestId.replace(/^req_/, '');
    this.echo = echoOf(body);
  }

  /** The response `json` showed, or null before it did. */
  get shown(): ResponseObject | null {
    return this.shownResponse;
  }

  get responseId(): string {
    return `resp_${this.base}`;
  }

  /** The id of the answer's `n`th message item (text that follows a tool call is a message of its own). */
  messageId(n = 0): string {
    return n === 0 ? `msg_${this.base}` : `msg_${this.base}_${n}`;
  }

  callId(index: number): string {
    return `fc_${this.base}_${index}`;
  }

  response(fields: { created: number; model: string; status: ResponseObject['status']; finish: FinishReason | null; output: ResponseOutputItem[]; usage: Usage | null | undefined }): ResponseObject {
    return {
      id: this.responseId,
      object: 'response',
      created_at: fields.created,
      status: fields.status,
      error: null,
      incomplete_details: incompleteOf(fields.finish),
      model: fields.model,
      output: fields.output,
      usage: usageOf(fields.usage),
      ...this.echo,
    };
  }

  json(completion: string, counted: Usage): string {
    const parsed = JSON.parse(completion) as ChatCompletion;
    const choice = Array.isArray(parsed.choices) ? parsed.choices[0] : undefined;
    const output: ResponseOutputItem[] = [];
    const message = choice?.message;
    const calls = message?.tool_calls ?? [];
    if (message !== undefined && (typeof message.refusal === 'string' || (message.content ?? '') !== '' || calls.length === 0)) {
      const content: ResponseMessageItem['content'] = [];
      if (typeof message.content === 'string' || message.refusal == null) content.push({ type: 'output_text', text: message.content ?? '', annotations: [] });
      if (typeof message.refusal === 'string') content.push({ type: 'refusal', refusal: message.refusal });
      output.push({ type: 'message', id: this.messageId(), status: 'completed', role: 'assistant', content });
    }
    calls.forEach((call: ToolCall, i) => output.push({ type: 'function_call', id: this.callId(i), call_id: call.id, name: call.function.name, arguments: call.function.arguments, status: 'completed' }));
    const finish = choice?.finish_reason ?? null;
    // The item the output cap or a content filter cut short, the last, is incomplete, as the response is.
    const last = output.at(-1);
    if (incompleteOf(finish) !== null && last !== undefined) last.status = 'incomplete';
    // A response always has its usage (clients such as the Vercel AI SDK require it): the
    // upstream's, or what was counted for an upstream that gave none.
    this.shownResponse = this.response({ created: parsed.created, model: parsed.model, status: incompleteOf(finish) === null ? 'completed' : 'incomplete', finish, output, usage: parsed.usage ?? counted });
    return JSON.stringify(this.shownResponse);
  }

  transcript(frames: string): string {
    return new ResponsesStream(this).push(frames);
  }

  error(err: GatewayError): GatewayError {
    return inResponsesTerms(err) as GatewayError;
  }

  stream(): ResponsesStream {
    return new ResponsesStream(this);
  }
}

interface OpenPart {
  type: 'output_text' | 'refusal';
  text: string;
}

interface OpenCall {
  item: ResponseFunctionCallItem;
  outputIndex: number;
  /**
   * Whether `output_item.added` went out. It waits for the call's name, which some upstreams send
   * after the call's first chunk: clients take the name from that event (the Vercel AI SDK finds
   * no tool named ""). Arguments that came before it go out with it.
   */
  announced: boolean;
}

/**
 * Chat SSE frames in, Responses events out, a batch at a time. A message item is opened by the
 * first text, and closed when a tool call starts or the stream ends; each tool call is an item of
 * its own. `[DONE]` ends the response (`response.completed`, or `response.incomplete` for a
 * completion cut by its output cap or a content filter); an error frame becomes an `error` event
 * that also carries the error envelope, which the openai SDK raises.
 */
export class ResponsesStream {
  private sequence = 0;
  private started = false;
  private ended = false;
  private created = 0;
  private model = '';
  private nextOutput = 0;
  private message: { item: ResponseMessageItem; outputIndex: number; part: OpenPart | null } | null = null;
  /** Message items opened so far: each gets an id of its own. */
  private messages = 0;
  private readonly calls = new Map<number, OpenCall>();
  /** Finished items, by output index. */
  private readonly done: ResponseOutputItem[] = [];
  private finish: FinishReason | null = null;
  private usage: Usage | null = null;
  /** The final response, once it ended. */
  response: ResponseObject | null = null;

  constructor(private readonly presenter: ResponsesPresenter) {}

  push(frames: string): string {
    let out = '';
    for (const event of frames.split('\n\n')) {
      if (this.ended || !event.startsWith('data: ')) continue;
      const data = event.slice(6);
      if (data === '[DONE]') {
        out += this.end();
        continue;
      }
      let parsed: Partial<ChatCompletionChunk> & { error?: { message: string; type: string; param: string | null; code: string } };
      try {
        parsed = JSON.parse(data) as typeof parsed;
      } catch {
        // Relayed as is on chat completions; nothing a response could show.
        continue;
      }
      if (typeof parsed !== 'object' || parsed === null) continue;
      if (parsed.error != null) {
        this.ended = true;
        const { message, type, param, code } = parsed.error;
        out += this.event('error', { code, message, param, error: { message, type, param, code } });
        continue;
      }
      out += this.chunk(parsed);
    }
    return out;
  }

  private event(type: string, fields: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...fields })}\n\n`;
  }

  private chunk(chunk: Partial<ChatCompletionChunk>, force = false): string {
    let out = '';
    // Some upstreams open with a chunk of no choices, time or model (Azure's filter results): the
    // response starts with the first chunk that has them.
    if (this.created === 0 && typeof chunk.created === 'number') this.created = chunk.created;
    if (this.model === '' && typeof chunk.model === 'string') this.model = chunk.model;
    const choice = Array.isArray(chunk.choices) ? (chunk.choices[0] as Partial<ChatCompletionChunk['choices'][number]> | undefined) : undefined;
    if (!this.started && (force || choice != null || (this.model !== '' && this.created !== 0))) {
      this.started = true;
      const response = this.snapshot('in_progress', []);
      out += this.event('response.created', { response });
      out += this.event('response.in_progress', { response });
    }
    if (chunk.usage != null) this.usage = chunk.usage;
    if (choice == null) return out;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content !== '') out += this.textDelta('output_text', delta.content);
    if (typeof delta.refusal === 'string' && delta.refusal !== '') out += this.textDelta('refusal', delta.refusal);
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      let open = this.calls.get(call.index);
      if (open === undefined) {
        out += this.closeMessage();
        out += this.announcePending();
        const item: ResponseFunctionCallItem = {
          type: 'function_call', id: this.presenter.callId(call.index), call_id: call.id ?? '', name: '', arguments: '', status: 'in_progress',
        };
        open = { item, outputIndex: this.nextOutput++, announced: false };
        this.calls.set(call.index, open);
      }
      if (open.item.call_id === '' && typeof call.id === 'string') open.item.call_id = call.id;
      if (open.item.name === '' && typeof call.function?.name === 'string') open.item.name = call.function.name;
      const args = call.function?.arguments;
      const fresh = typeof args === 'string' ? args : '';
      open.item.arguments += fresh;
      if (!open.announced && open.item.name !== '') out += this.announce(open);
      else if (open.announced && fresh !== '') out += this.event('response.function_call_arguments.delta', { item_id: open.item.id, output_index: open.outputIndex, delta: fresh });
    }
    if (choice.finish_reason != null) this.finish = choice.finish_reason;
    return out;
  }

  /** Calls still waiting for their name are shown as they are before a later item: clients add items in the order they are announced. */
  private announcePending(): string {
    let out = '';
    for (const open of this.calls.values()) if (!open.announced) out += this.announce(open);
    return out;
  }

  /** The call's `output_item.added`, and the arguments that came before it. */
  private announce(open: OpenCall): string {
    open.announced = true;
    if (open.item.call_id === '') open.item.call_id = open.item.id;
    let out = this.event('response.output_item.added', { output_index: open.outputIndex, item: { ...open.item, arguments: '' } });
    if (open.item.arguments !== '') out += this.event('response.function_call_arguments.delta', { item_id: open.item.id, output_index: open.outputIndex, delta: open.item.arguments });
    return out;
  }

  private textDelta(type: OpenPart['type'], text: string): string {
    let out = '';
    if (this.message === null) {
      out += this.announcePending();
      const item: ResponseMessageItem = { type: 'message', id: this.presenter.messageId(this.messages++), status: 'in_progress', role: 'assistant', content: [] };
      this.message = { item, outputIndex: this.nextOutput++, part: null };
      out += this.event('response.output_item.added', { output_index: this.message.outputIndex, item: { ...item, content: [] } });
    }
    const message = this.message;
    if (message.part !== null && message.part.type !== type) out += this.closePart();
    if (message.part === null) {
      message.part = { type, text: '' };
      out += this.event('response.content_part.added', { ...this.partPlace(), part: partOf(message.part) });
    }
    message.part.text += text;
    out += this.event(type === 'output_text' ? 'response.output_text.delta' : 'response.refusal.delta', { ...this.partPlace(), delta: text, ...(type === 'output_text' ? { logprobs: [] } : {}) });
    return out;
  }

  private partPlace(): { item_id: string; output_index: number; content_index: number } {
    const message = this.message as NonNullable<ResponsesStream['message']>;
    return { item_id: message.item.id, output_index: message.outputIndex, content_index: message.item.content.length };
  }

  private closePart(): string {
    const message = this.message;
    if (message === null || message.part === null) return '';
    const part = message.part;
    const place = this.partPlace();
    let out = part.type === 'output_text'
      ? this.event('response.output_text.done', { ...place, text: part.text, logprobs: [] })
      : this.event('response.refusal.done', { ...place, refusal: part.text });
    out += this.event('response.content_part.done', { ...place, part: partOf(part) });
    message.item.content.push(partOf(part));
    message.part = null;
    return out;
  }

  private closeMessage(status: 'completed' | 'incomplete' = 'completed'): string {
    const message = this.message;
    if (message === null) return '';
    let out = this.closePart();
    message.item.status = status;
    this.done[message.outputIndex] = message.item;
    out += this.event('response.output_item.done', { output_index: message.outputIndex, item: message.item });
    this.message = null;
    return out;
  }

  private end(): string {
    this.ended = true;
    let out = '';
    if (!this.started) out += this.chunk({}, true);
    const incomplete = incompleteOf(this.finish) !== null;
    // The item the output cap or a content filter cut short, the last one, is incomplete, as the
    // response is; those before it had ended.
    const cut = incomplete ? this.nextOutput - 1 : -1;
    const statusOf = (outputIndex: number): 'completed' | 'incomplete' => (outputIndex === cut ? 'incomplete' : 'completed');
    if (this.message !== null) out += this.closeMessage(statusOf(this.message.outputIndex));
    for (const open of [...this.calls.values()].sort((a, b) => a.outputIndex - b.outputIndex)) {
      if (!open.announced) out += this.announce(open);
      open.item.status = statusOf(open.outputIndex);
      this.done[open.outputIndex] = open.item;
      out += this.event('response.function_call_arguments.done', { item_id: open.item.id, output_index: open.outputIndex, name: open.item.name, arguments: open.item.arguments });
      out += this.event('response.output_item.done', { output_index: open.outputIndex, item: open.item });
    }
    const response = this.snapshot(incomplete ? 'incomplete' : 'completed', this.done.filter((item) => item !== undefined));
    this.response = response;
    out += this.event(incomplete ? 'response.incomplete' : 'response.completed', { response });
    return out;
  }

  private snapshot(status: ResponseObject['status'], output: ResponseOutputItem[]): ResponseObject {
    return this.presenter.response({ created: this.created, model: this.model, status, finish: status === 'in_progress' ? null : this.finish, output, usage: status === 'in_progress' ? null : this.usage });
  }
}

function partOf(part: OpenPart): ResponseMessageItem['content'][number] {
  return part.type === 'output_text' ? { type: 'output_text', text: part.text, annotations: [] } : { type: 'refusal', refusal: part.text };
}
