/**
 * A local stand-in for OpenAI's chat-completions API, speaking its wire format closely enough
 * that the official `openai` SDK (through the gateway) and the OpenAI adapter cannot tell the
 * difference: the same objects, the same stream framing, the same error bodies and statuses.
 * A behaviour set with `behave` holds for every following request until changed.
 *
 * Token counts are deterministic so tests can assert them: a completion token is one word of the
 * reply; prompt tokens are 3 per message plus one per word of string content, plus 3.
 */
import { listenLocal } from '../support/local-server.js';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { fakeEmbeddings } from './openai-embeddings.js';
import { FAKE_FILES_PATH, TINY_PNG, fakeImageEdit, fakeImages } from './openai-images.js';
import { writeAnswer, type FakeAnswer } from './fake-answer.js';
import { fakeSpeech, fakeTranscription } from './openai-audio.js';
import { FakeVideoJobs } from './openai-videos.js';
import { isMultipart, readMultipartForm } from './multipart-form.js';

export interface FakeOpenAI {
  /** http://127.0.0.1:PORT/v1 */
  url: string;
  /**
   * Every request received, in order; `body` is the parsed JSON (or the raw text if it was not
   * JSON), or for a multipart upload a FakeForm (fields, and each file's size and hash).
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests reach into arbitrary request fields.
  requests: Array<{ method: string; path: string; headers: IncomingHttpHeaders; body: any }>;
  behave(b: OpenAIBehaviour): void;
  /** The video jobs, to configure how they progress (`configure`) and inspect them. */
  videos: FakeVideoJobs;
  close(): Promise<void>;
}

export type OpenAIBehaviour =
  /** `noUsage`: as servers that ignore `stream_options` and report no usage (older vLLM, some proxies). */
  | { kind: 'ok'; text?: string; noUsage?: boolean }
  | { kind: 'tool_call' }
  | { kind: 'error'; status: number; type: string; code: string | null; message: string; param?: string | null; retryAfter?: string }
  /** A 200 whose body is cut-off JSON (non-stream) or an event stream whose data is not JSON. */
  | { kind: 'malformed' }
  /** A 200 HTML page, to streaming and non-streaming requests alike. */
  | { kind: 'not_json_content_type' }
  /** Never answers; the socket stays open until `close`. */
  | { kind: 'hang' }
  /**
   * Streams the role chunk and `afterChunks` content chunks, then ends the body without [DONE].
   * Non-stream requests get `ok`; speech sends `afterChunks` chunks of audio, then drops the connection.
   */
  | { kind: 'cut_stream'; afterChunks: number }
  /** Streams the role chunk and `afterChunks` content chunks, then an error frame, then ends. Non-stream requests get `ok`. */
  | { kind: 'stream_error'; afterChunks: number };

export const FAKE_OPENAI_KEY = 'sk-fake-openai-0123456789abcdefghijklmnopqrstuv';

export const FAKE_DEFAULT_REPLY = 'Hello! How can I help you today?';
const FINGERPRINT = 'fp_f4k3c0ffee';
const TOOL_ARGUMENTS = '{"location":"Paris, France","unit":"celsius"}';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- request bodies are whatever the client sent; the fake reads them loosely, as a server would.
type Json = Record<string, any>;

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  let behaviour: OpenAIBehaviour = { kind: 'ok' };
  const requests: FakeOpenAI['requests'] = [];
  const videos = new FakeVideoJobs();

  const server = createServer((req, res) => {
    const method = req.method ?? 'GET';
    if (isMultipart(req.headers)) {
      // Streamed, not buffered: uploads can be large.
      readMultipartForm(req).then(
        (form) => {
          requests.push({ method, path: req.url ?? '/', headers: req.headers, body: form });
          handle(req, res, req.url ?? '/', form, behaviour, videos);
        },
        () => writeAnswer(res, { status: 400, json: { error: { message: 'Could not parse multipart form', type: 'invalid_request_error', param: null, code: null } } }),
      );
      return;
    }
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      let body: unknown = text;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        // Recorded as the raw text; answered below as OpenAI answers bad JSON.
      }
      const path = req.url ?? '/';
      requests.push({ method, path, headers: req.headers, body });
      handle(req, res, path, body, behaviour, videos);
    });
  });
  server.keepAliveTimeout = 60_000;
  const local = await listenLocal(server);

  return {
    url: `${local.origin}/v1`,
    requests,
    behave(b) {
      behaviour = b;
    },
    videos,
    close: () => local.close(),
  };
}

function handle(req: IncomingMessage, res: ServerResponse, path: string, parsed: unknown, b: OpenAIBehaviour, videos: FakeVideoJobs): void {
  res.setHeader('x-request-id', `req_${randomBytes(16).toString('hex')}`);
  res.setHeader('openai-processing-ms', '42');
  res.setHeader('openai-version', '2020-10-01');

  // The links of DALL·E-style answers need no key, as OpenAI's signed links need none.
  if (req.method === 'GET' && path.startsWith(FAKE_FILES_PATH)) {
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(TINY_PNG);
    return;
  }
  const auth = req.headers.authorization;
  if (auth === undefined) {
    return sendError(res, 401, 'invalid_request_error', null, "You didn't provide an API key. Send it in an Authorization header as Bearer auth.");
  }
  if (auth !== `Bearer ${FAKE_OPENAI_KEY}`) {
    const given = auth.replace(/^Bearer\s*/i, '');
    return sendError(res, 401, 'invalid_request_error', 'invalid_api_key', `Incorrect API key provided: ${mask(given)}. You can find your API key in your account settings.`);
  }
  if (req.method === 'POST' && path.split('?')[0] === '/v1/embeddings') return embeddings(res, parsed, b);
  if (req.method === 'POST' && path.split('?')[0] === '/v1/images/generations') {
    const answer = fakeImages(typeof parsed === 'object' && parsed !== null ? parsed : {}, `http://${req.headers.host ?? '127.0.0.1'}`);
    return sendJson(res, answer.status, answer.body);
  }
  if (req.method === 'POST' && path.split('?')[0] === '/v1/images/edits') {
    const answer = fakeImageEdit(parsed);
    return sendJson(res, answer.status, answer.body);
  }
  const media = mediaAnswer(req.method ?? 'GET', path.split('?')[0] ?? '', parsed, b, videos);
  if (media !== undefined) {
    if (media !== 'hang') writeAnswer(res, media);
    return;
  }
  if (req.method !== 'POST' || path.split('?')[0] !== '/v1/chat/completions') {
    return sendError(res, 404, 'invalid_request_error', 'unknown_url', `Unknown request URL: ${req.method ?? 'GET'} ${path}.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return sendError(res, 400, 'invalid_request_error', null, 'We could not parse the JSON body of your request.');
  }
  const body = parsed as Json;
  if (typeof body.model !== 'string') return sendError(res, 400, 'invalid_request_error', null, 'you must provide a model parameter', 'model');
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return sendError(res, 400, 'invalid_request_error', null, "Invalid 'messages': empty array. Expected an array with minimum length 1.", 'messages');
  }
  const longId = longToolCallId(body.messages as Json[]);
  if (longId !== undefined) {
    return sendError(res, 400, 'invalid_request_error', 'string_above_max_length', `Invalid '${longId.param}': string too long. Expected a string with maximum length 40, but got a string with length ${longId.length} instead.`, longId.param);
  }
  if (body.stream_options != null && body.stream !== true) {
    return sendError(res, 400, 'invalid_request_error', null, "The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
  }

  const stream = body.stream === true;
  switch (b.kind) {
    case 'error':
      if (b.retryAfter !== undefined) res.setHeader('retry-after', b.retryAfter);
      return sendError(res, b.status, b.type, b.code, b.message, b.param ?? null);
    case 'malformed':
      if (stream) {
        startStream(res);
        res.end('data: this is not json\n\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"chatcmpl-broken","object":"chat.completion","choices":[{"index":0,');
      return;
    case 'not_json_content_type':
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<html><body><h1>Welcome to nginx!</h1></body></html>');
      return;
    case 'hang':
      return;
    case 'tool_call':
      return stream ? streamToolCall(res, body) : sendJson(res, 200, toolCallCompletion(body));
    case 'ok': {
      if (b.noUsage === true) {
        const asked = { ...body, stream_options: undefined };
        if (stream) return streamText(res, asked, b.text ?? FAKE_DEFAULT_REPLY);
        const { usage: _dropped, ...unmetered } = textCompletion(asked, b.text ?? FAKE_DEFAULT_REPLY);
        return sendJson(res, 200, unmetered);
      }
      return stream ? streamText(res, body, b.text ?? FAKE_DEFAULT_REPLY) : sendJson(res, 200, textCompletion(body, b.text ?? FAKE_DEFAULT_REPLY));
    }
    case 'cut_stream':
    case 'stream_error':
      return stream ? streamText(res, body, FAKE_DEFAULT_REPLY, b) : sendJson(res, 200, textCompletion(body, FAKE_DEFAULT_REPLY));
  }
}

function embeddings(res: ServerResponse, parsed: unknown, b: OpenAIBehaviour): void {
  if (b.kind === 'error') {
    if (b.retryAfter !== undefined) res.setHeader('retry-after', b.retryAfter);
    return sendError(res, b.status, b.type, b.code, b.message, b.param ?? null);
  }
  if (b.kind === 'malformed') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"object":"list","data":[{"object":"embedding",');
    return;
  }
  const answer = fakeEmbeddings(typeof parsed === 'object' && parsed !== null ? parsed : {});
  sendJson(res, answer.status, answer.body);
}

/**
 * The audio and video routes' answer, 'hang' to send none, or undefined for another route. The
 * `error` and `hang` behaviours hold for these routes as for chat.
 */
function mediaAnswer(method: string, route: string, parsed: unknown, b: OpenAIBehaviour, videos: FakeVideoJobs): FakeAnswer | 'hang' | undefined {
  const video = /^\/v1\/videos\/([^/]+)(\/content)?$/.exec(route);
  const known =
    (method === 'POST' && (route === '/v1/audio/speech' || route === '/v1/audio/transcriptions' || route === '/v1/audio/translations' || route === '/v1/videos')) ||
    (video !== null && (method === 'GET' || (method === 'DELETE' && video[2] === undefined)));
  if (!known) return undefined;
  if (b.kind === 'hang') return 'hang';
  if (b.kind === 'error') {
    const body = { error: { message: b.message, type: b.type, param: b.param ?? null, code: b.code } };
    return { status: b.status, json: body, ...(b.retryAfter === undefined ? {} : { headers: { 'retry-after': b.retryAfter } }) };
  }
  if (route === '/v1/audio/speech') return fakeSpeech(parsed, b.kind === 'cut_stream' ? b.afterChunks : undefined);
  if (route === '/v1/audio/transcriptions') return fakeTranscription(parsed, b.kind === 'malformed');
  if (route === '/v1/audio/translations') return fakeTranscription(parsed, b.kind === 'malformed', 'translate');
  if (video === null) return videos.create(parsed);
  const id = pathSegment(video[1] ?? '');
  if (method === 'DELETE') return videos.remove(id);
  return video[2] === undefined ? videos.retrieve(id) : videos.content(id);
}

function pathSegment(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}

// ---- non-streaming ---------------------------------------------------------------------------

function textCompletion(body: Json, text: string): Json {
  const { words, finish } = reply(body, text);
  const n = choiceCount(body);
  const choices = Array.from({ length: n }, (_, index) => ({
    index,
    message: { role: 'assistant', content: words.join(''), refusal: null, annotations: [] },
    logprobs: null,
    finish_reason: finish,
  }));
  return completion(body, choices, usage(body, words.length * n));
}

function toolCallCompletion(body: Json): Json {
  const message = {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: toolCallId(), type: 'function', function: { name: toolName(body), arguments: TOOL_ARGUMENTS } }],
    refusal: null,
    annotations: [],
  };
  return completion(body, [{ index: 0, message, logprobs: null, finish_reason: 'tool_calls' }], usage(body, 18));
}

function completion(body: Json, choices: Json[], usageValue: Json): Json {
  return {
    id: completionId(),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices,
    usage: usageValue,
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  };
}

// ---- streaming -------------------------------------------------------------------------------

type Cut = { kind: 'cut_stream' | 'stream_error'; afterChunks: number };

function streamText(res: ServerResponse, body: Json, text: string, cut?: Cut): void {
  const { words, finish } = reply(body, text);
  const n = choiceCount(body);
  const frame = chunkFramer(body);
  startStream(res);
  const indexes = Array.from({ length: n }, (_, i) => i);
  res.write(frame(indexes.map((index) => ({ index, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }))));
  let sent = 0;
  for (const word of words) {
    if (cut !== undefined && sent === cut.afterChunks) return endCut(res, cut);
    for (const index of indexes) res.write(frame([{ index, delta: { content: word }, logprobs: null, finish_reason: null }]));
    sent++;
  }
  if (cut !== undefined) return endCut(res, cut);
  for (const index of indexes) res.write(frame([{ index, delta: {}, logprobs: null, finish_reason: finish }]));
  endStream(res, body, frame, words.length * n);
}

function streamToolCall(res: ServerResponse, body: Json): void {
  const frame = chunkFramer(body);
  startStream(res);
  const call = { index: 0, id: toolCallId(), type: 'function', function: { name: toolName(body), arguments: '' } };
  res.write(frame([{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [call], refusal: null }, logprobs: null, finish_reason: null }]));
  for (let at = 0; at < TOOL_ARGUMENTS.length; at += 8) {
    const piece = TOOL_ARGUMENTS.slice(at, at + 8);
    res.write(frame([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, logprobs: null, finish_reason: null }]));
  }
  res.write(frame([{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }]));
  endStream(res, body, frame, 18);
}

/** Every chunk of one stream shares id, created and model; `usage` is null on each when usage was asked for. */
function chunkFramer(body: Json): (choices: Json[], usageValue?: Json) => string {
  const id = completionId();
  const created = Math.floor(Date.now() / 1000);
  const withUsage = body.stream_options?.include_usage === true;
  return (choices, usageValue) => {
    const chunk: Json = {
      id,
      object: 'chat.completion.chunk',
      created,
      model: body.model,
      service_tier: 'default',
      system_fingerprint: FINGERPRINT,
      choices,
    };
    if (withUsage) chunk.usage = usageValue ?? null;
    return `data: ${JSON.stringify(chunk)}\n\n`;
  };
}

function startStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
}

function endStream(res: ServerResponse, body: Json, frame: ReturnType<typeof chunkFramer>, completionTokens: number): void {
  if (body.stream_options?.include_usage === true) res.write(frame([], usage(body, completionTokens)));
  res.end('data: [DONE]\n\n');
}

function endCut(res: ServerResponse, cut: Cut): void {
  if (cut.kind === 'stream_error') {
    const error = { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null };
    res.write(`data: ${JSON.stringify({ error })}\n\n`);
  }
  res.end();
}

// ---- shared ----------------------------------------------------------------------------------

/** The reply split into word tokens (each keeps its trailing space), cut at the output cap. */
function reply(body: Json, text: string): { words: string[]; finish: 'stop' | 'length' } {
  const words = text.match(/\S+\s*/g) ?? [];
  const cap = body.max_completion_tokens ?? body.max_tokens;
  if (typeof cap === 'number' && cap >= 0 && cap < words.length) return { words: words.slice(0, cap), finish: 'length' };
  return { words, finish: 'stop' };
}

function choiceCount(body: Json): number {
  return typeof body.n === 'number' && body.n >= 1 ? Math.floor(body.n) : 1;
}

function usage(body: Json, completionTokens: number): Json {
  let prompt = 3;
  for (const message of body.messages as Json[]) {
    prompt += 3;
    if (typeof message.content === 'string') prompt += message.content.split(/\s+/).filter(Boolean).length;
  }
  return {
    prompt_tokens: prompt,
    completion_tokens: completionTokens,
    total_tokens: prompt + completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function toolName(body: Json): string {
  const name: unknown = body.tools?.[0]?.function?.name;
  return typeof name === 'string' ? name : 'get_weather';
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function sendError(res: ServerResponse, status: number, type: string, code: string | null, message: string, param: string | null = null): void {
  sendJson(res, status, { error: { message, type, param, code } });
}

function mask(key: string): string {
  return key.length <= 8 ? '*'.repeat(key.length) : `${key.slice(0, 3)}${'*'.repeat(key.length - 7)}${key.slice(-4)}`;
}

function completionId(): string {
  return `chatcmpl-${randomBytes(15).toString('base64url')}`;
}

function toolCallId(): string {
  return `call_${randomBytes(12).toString('base64url')}`;
}

/** OpenAI refuses a call id longer than 40 characters, in a call and in a tool message alike. */
function longToolCallId(messages: Json[]): { param: string; length: number } | undefined {
  for (const [i, msg] of messages.entries()) {
    if (typeof msg.tool_call_id === 'string' && msg.tool_call_id.length > 40) return { param: `messages[${i}].tool_call_id`, length: msg.tool_call_id.length };
    if (!Array.isArray(msg.tool_calls)) continue;
    for (const [j, call] of (msg.tool_calls as Json[]).entries()) {
      if (typeof call.id === 'string' && call.id.length > 40) return { param: `messages[${i}].tool_calls[${j}].id`, length: call.id.length };
    }
  }
  return undefined;
}
