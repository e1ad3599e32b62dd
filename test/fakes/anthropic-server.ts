/**
 * A local stand-in for Anthropic's Messages API (POST /v1/messages), speaking its wire format:
 * the same headers, error bodies and server-sent event sequence as the real service, written
 * from Anthropic's public documentation. Used by the adapter's tests and by black-box tests of
 * the gateway, so it also validates requests the way the real API does where that catches
 * translation bugs (roles, empty text blocks, temperature range, required fields).
 */
import { listenLocal } from '../support/local-server.js';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';

/** The only key the fake accepts; any other `x-api-key` gets Anthropic's 401. */
export const FAKE_ANTHROPIC_API_KEY = 'sk-ant-fake-0123456789abcdef';
/** API versions the fake accepts in `anthropic-version`, as the real API does. */
export const FAKE_ANTHROPIC_VERSIONS = ['2023-06-01', '2023-01-01'] as const;
export const FAKE_DEFAULT_TEXT = 'Hello from the fake Anthropic server.';
/** Input-side usage of every answer; distinct numbers so that tests can tell the fields apart. */
export const FAKE_INPUT_USAGE = { input_tokens: 21, cache_creation_input_tokens: 4, cache_read_input_tokens: 8 } as const;
/** The `tool_use` behaviour's text, call id and input. The tool name is taken from the request. */
export const FAKE_TOOL_USE = {
  text: 'Let me look that up.',
  id: 'toolu_01FakeToolUse00000000001',
  input: { location: 'Paris', unit: 'celsius' },
} as const;

export type AnthropicBehaviour =
  | { kind: 'ok'; text?: string }
  | { kind: 'tool_use' }
  | { kind: 'error'; status: number; errorType: string; message: string; retryAfter?: string }
  | { kind: 'malformed' }
  | { kind: 'hang' }
  /** Streams only: sends the first `afterEvents` events (pings included), then ends the body cleanly. */
  | { kind: 'cut_stream'; afterEvents: number }
  /** Streams only: sends the first `afterEvents` events, then an overloaded_error `error` event. */
  | { kind: 'stream_error'; afterEvents: number };

export interface RecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests inspect arbitrary request JSON.
  body: any;
}

export interface FakeAnthropic {
  /** Base URL including the version path, e.g. http://127.0.0.1:PORT/v1 (the adapter appends /messages). */
  url: string;
  requests: RecordedRequest[];
  behave(b: AnthropicBehaviour): void;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
type SseFrame = [event: string, data: Json];

class RequestError extends Error {
  constructor(readonly status: number, readonly errorType: string, message: string) {
    super(message);
  }
}

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  let behaviour: AnthropicBehaviour = { kind: 'ok' };
  let counter = 0;
  const requests: RecordedRequest[] = [];

  const server = createServer((req, res) => {
    const requestId = `req_fake${String(++counter).padStart(6, '0')}`;
    res.setHeader('request-id', requestId);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // kept as text: validation answers it
      }
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      try {
        const parsed = validate(req, body);
        respond(res, behaviour, parsed, counter, requestId);
      } catch (err) {
        // A bug in the fake must show up as a failing request, not crash the test process.
        if (err instanceof RequestError) sendError(res, err.status, err.errorType, err.message, requestId);
        else sendError(res, 500, 'api_error', `fake server fault: ${String(err)}`, requestId);
      }
    });
  });
  const local = await listenLocal(server);

  return {
    url: `${local.origin}/v1`,
    requests,
    behave(b) {
      behaviour = b;
    },
    close: () => local.close(),
  };
}

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

/** Checks the request as the real API would, in its order: route, key, version, body. */
function validate(req: IncomingMessage, body: unknown): Json {
  if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/messages') {
    throw new RequestError(404, 'not_found_error', `${req.method ?? ''} ${req.url ?? ''}: not found`);
  }
  if (req.headers['x-api-key'] !== FAKE_ANTHROPIC_API_KEY) throw new RequestError(401, 'authentication_error', 'invalid x-api-key');
  const version = req.headers['anthropic-version'];
  if (version === undefined) throw new RequestError(400, 'invalid_request_error', 'anthropic-version: header is required');
  if (!(FAKE_ANTHROPIC_VERSIONS as readonly string[]).includes(String(version))) {
    throw new RequestError(400, 'invalid_request_error', `anthropic-version: unknown version ${String(version)}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new RequestError(400, 'invalid_request_error', 'The request body is not valid JSON.');
  }
  const b = body as Json;
  const bad = (message: string): never => {
    throw new RequestError(400, 'invalid_request_error', message);
  };
  if (typeof b.model !== 'string' || b.model === '') bad('model: Field required');
  if (typeof b.max_tokens !== 'number' || !Number.isInteger(b.max_tokens) || b.max_tokens < 1) bad('max_tokens: Field required');
  if (!Array.isArray(b.messages) || b.messages.length === 0) bad('messages: Field required');
  (b.messages as unknown[]).forEach((m, i) => {
    const msg = m as Json;
    if (msg.role !== 'user' && msg.role !== 'assistant') bad(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    if (typeof msg.content === 'string') {
      if (msg.content === '') bad(`messages.${i}: all messages must have non-empty content`);
    } else if (Array.isArray(msg.content)) {
      if (msg.content.length === 0) bad(`messages.${i}: all messages must have non-empty content`);
      (msg.content as Json[]).forEach((block, j) => {
        if (block.type === 'text' && (typeof block.text !== 'string' || block.text === '')) bad('messages: text content blocks must be non-empty');
        if (block.type === 'text' && (block.text as string).trim() === '') bad('messages: text content blocks must contain non-whitespace text');
        // Anthropic's own check of call ids, whatever provider made them.
        if (block.type === 'tool_use' && !TOOL_ID.test(String(block.id))) bad(`messages.${i}.content.${j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
        if (block.type === 'tool_result' && !TOOL_ID.test(String(block.tool_use_id))) bad(`messages.${i}.content.${j}.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
      });
    } else {
      bad(`messages.${i}.content: Field required`);
    }
  });
  if (b.temperature !== undefined && (typeof b.temperature !== 'number' || b.temperature < 0 || b.temperature > 1)) {
    bad('temperature: Input should be less than or equal to 1');
  }
  if (b.system !== undefined && typeof b.system !== 'string' && !Array.isArray(b.system)) bad('system: Input should be a valid string');
  // As the newer models (Claude Sonnet 4.5 and later) answer.
  if (b.temperature !== undefined && b.top_p !== undefined) bad('`temperature` and `top_p` cannot both be specified for this model. Please use only one.');
  if (Array.isArray(b.stop_sequences)) {
    for (const stop of b.stop_sequences as unknown[]) {
      if (typeof stop !== 'string' || stop.trim() === '') bad('stop_sequences: each stop sequence must contain non-whitespace');
    }
  }
  return b;
}

function respond(res: ServerResponse, behaviour: AnthropicBehaviour, req: Json, n: number, requestId: string): void {
  const stream = req.stream === true;
  const model = String(req.model);
  const id = `msg_01Fake${String(n).padStart(16, '0')}`;
  switch (behaviour.kind) {
    case 'hang':
      return;
    case 'error':
      if (behaviour.retryAfter !== undefined) res.setHeader('retry-after', behaviour.retryAfter);
      sendError(res, behaviour.status, behaviour.errorType, behaviour.message, requestId);
      return;
    case 'malformed':
      if (stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
        res.end('event: message_start\ndata: {"type":"message_start","message":{"id":\n\n');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id":"msg_01Broken","type":"message","content":[{"type":"te');
      }
      return;
    default: {
      const answer = behaviour.kind === 'tool_use' ? toolUseAnswer(req) : textAnswer(req, behaviour.kind === 'ok' ? behaviour.text : undefined);
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(messageBody(id, model, answer)));
        return;
      }
      const frames = streamFrames(id, model, answer);
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      if (behaviour.kind === 'cut_stream') {
        writeFrames(res, frames.slice(0, behaviour.afterEvents));
      } else if (behaviour.kind === 'stream_error') {
        writeFrames(res, frames.slice(0, behaviour.afterEvents));
        writeFrames(res, [['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]]);
      } else {
        writeFrames(res, frames);
      }
      res.end();
    }
  }
}

function sendError(res: ServerResponse, status: number, errorType: string, message: string, requestId: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ type: 'error', error: { type: errorType, message }, request_id: requestId }));
}

function writeFrames(res: ServerResponse, frames: SseFrame[]): void {
  for (const [event, data] of frames) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** What the fake "generated": text pieces (one per output token) and an optional tool call. */
interface Answer {
  pieces: string[];
  tool?: { id: string; name: string; input: Json; jsonPieces: string[] };
  stopReason: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use';
  stopSequence: string | null;
  outputTokens: number;
}

/** Splits text into word-sized pieces, each counted as one output token. */
function words(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\s)(?=\S)/);
}

/** Honours stop_sequences and max_tokens like the real API, so tests can provoke those stop reasons. */
function textAnswer(req: Json, text = FAKE_DEFAULT_TEXT): Answer {
  let stopReason: Answer['stopReason'] = 'end_turn';
  let stopSequence: string | null = null;
  const stops = Array.isArray(req.stop_sequences) ? (req.stop_sequences as unknown[]).filter((s): s is string => typeof s === 'string' && s !== '') : [];
  let cut = text.length;
  for (const s of stops) {
    const at = text.indexOf(s);
    if (at >= 0 && at < cut) {
      cut = at;
      stopSequence = s;
      stopReason = 'stop_sequence';
    }
  }
  let pieces = words(text.slice(0, cut));
  const maxTokens = Number(req.max_tokens);
  if (pieces.length > maxTokens) {
    pieces = pieces.slice(0, maxTokens);
    stopReason = 'max_tokens';
    stopSequence = null;
  }
  return { pieces, stopReason, stopSequence, outputTokens: pieces.length };
}

function toolUseAnswer(req: Json): Answer {
  const choice = req.tool_choice as Json | undefined;
  const tools = Array.isArray(req.tools) ? (req.tools as Json[]) : [];
  const name = choice?.type === 'tool' && typeof choice.name === 'string' ? choice.name : typeof tools[0]?.name === 'string' ? tools[0].name : 'get_weather';
  const json = JSON.stringify(FAKE_TOOL_USE.input);
  const jsonPieces: string[] = [];
  for (let i = 0; i < json.length; i += 12) jsonPieces.push(json.slice(i, i + 12));
  const pieces = words(FAKE_TOOL_USE.text);
  return {
    pieces,
    tool: { id: FAKE_TOOL_USE.id, name, input: { ...FAKE_TOOL_USE.input }, jsonPieces },
    stopReason: 'tool_use',
    stopSequence: null,
    outputTokens: pieces.length + jsonPieces.length,
  };
}

function messageBody(id: string, model: string, a: Answer): Json {
  const content: Json[] = [];
  if (a.pieces.length > 0) content.push({ type: 'text', text: a.pieces.join('') });
  if (a.tool) content.push({ type: 'tool_use', id: a.tool.id, name: a.tool.name, input: a.tool.input });
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: a.stopReason,
    stop_sequence: a.stopSequence,
    usage: { ...FAKE_INPUT_USAGE, output_tokens: a.outputTokens },
  };
}

/** The documented event order, with pings where the real API tends to send them. */
function streamFrames(id: string, model: string, a: Answer): SseFrame[] {
  const frames: SseFrame[] = [
    ['message_start', {
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...FAKE_INPUT_USAGE, output_tokens: 1 } },
    }],
  ];
  let index = 0;
  if (a.pieces.length > 0) {
    frames.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
    frames.push(['ping', { type: 'ping' }]);
    a.pieces.forEach((text, i) => {
      frames.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } }]);
      if (i === 1) frames.push(['ping', { type: 'ping' }]);
    });
    frames.push(['content_block_stop', { type: 'content_block_stop', index }]);
    index++;
  }
  if (a.tool) {
    frames.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: a.tool.id, name: a.tool.name, input: {} } }]);
    frames.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } }]);
    for (const partial_json of a.tool.jsonPieces) {
      frames.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } }]);
    }
    frames.push(['content_block_stop', { type: 'content_block_stop', index }]);
  }
  frames.push(['message_delta', { type: 'message_delta', delta: { stop_reason: a.stopReason, stop_sequence: a.stopSequence }, usage: { output_tokens: a.outputTokens } }]);
  frames.push(['message_stop', { type: 'message_stop' }]);
  return frames;
}
