/**
 * A local stand-in for Google's Gemini API (generativelanguage v1beta), speaking its wire format:
 * POST /v1beta/models/{model}:generateContent, :streamGenerateContent (SSE with alt=sse, a JSON
 * array without), :embedContent and :batchEmbedContents, with Google's error bodies, written from
 * the public documentation. Used by the adapter's tests and by black-box tests of the gateway, so
 * it validates requests the way the real API does where that catches translation bugs: unknown
 * fields, empty parts, roles, function response counts, Gemini 3's thought signatures, batch size.
 */
import { listenLocal } from '../support/local-server.js';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';

/** The only key the fake accepts in `x-goog-api-key`; another gets Gemini's 400 API_KEY_INVALID, none its 403. */
export const FAKE_GEMINI_API_KEY = 'AIzaSyFake-0123456789abcdefghijklmnopq';
export const FAKE_DEFAULT_TEXT = 'Hello from the fake Gemini server.';
/** Usage of every answer besides the candidates' own tokens; distinct numbers so that tests can tell the fields apart. */
export const FAKE_USAGE = { promptTokenCount: 17, cachedContentTokenCount: 4, thoughtsTokenCount: 5 } as const;
/** The `tool_call` behaviour's arguments and the signature on its first call. The function name comes from the request. */
export const FAKE_FUNCTION_CALL = {
  args: { location: 'Paris', unit: 'celsius' },
  // Standard base64 with "+", "/" and padding, as Gemini's are, so that re-encoding slips show.
  thoughtSignature: Buffer.from('\u00fb\u00ff\u00bf fake thought signature #1', 'latin1').toString('base64'),
} as const;
/** Google's documented stand-in signature, accepted wherever a real one is required. */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';
export const FAKE_EMBEDDING_DIMENSIONS = 8;
/** batchEmbedContents refuses more requests than this, like the real API. */
export const FAKE_MAX_BATCH = 100;

export type GeminiBehaviour =
  /** finishReason SAFETY (and the other filters) withholds the content, as the real API does. */
  | { kind: 'ok'; text?: string; finishReason?: string }
  | { kind: 'tool_call'; calls?: number; text?: string }
  /** The prompt is refused: no candidates, promptFeedback.blockReason. */
  | { kind: 'blocked' }
  | { kind: 'error'; status: number; grpcStatus: string; message: string; retryAfter?: string; retryDelay?: string; reason?: string; echoKey?: boolean }
  | { kind: 'malformed' }
  | { kind: 'hang' }
  /** Streams only: sends the first `afterChunks` chunks, then ends the body cleanly. */
  | { kind: 'cut_stream'; afterChunks: number }
  /** Streams only: sends the first `afterChunks` chunks, then an error event (503 UNAVAILABLE unless told). */
  | { kind: 'stream_error'; afterChunks: number; code?: number; grpcStatus?: string; message?: string };

export interface RecordedRequest {
  /** Path and query, e.g. /v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse */
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests inspect arbitrary request JSON.
  body: any;
}

export interface FakeGemini {
  /** Base URL including the version path, e.g. http://127.0.0.1:PORT/v1beta (the adapter appends /models/...). */
  url: string;
  requests: RecordedRequest[];
  behave(b: GeminiBehaviour): void;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
type Method = 'generateContent' | 'streamGenerateContent' | 'embedContent' | 'batchEmbedContents';

class RequestError extends Error {
  constructor(
    readonly status: number,
    readonly grpcStatus: string,
    message: string,
    readonly details: Json[] = [],
  ) {
    super(message);
  }
}

/** A deterministic vector per text, so tests can check which input a vector belongs to. */
export function fakeEmbedding(text: string, dimensions = FAKE_EMBEDDING_DIMENSIONS): number[] {
  let seed = 7;
  for (let i = 0; i < text.length; i++) seed = (seed * 31 + text.charCodeAt(i)) % 100_003;
  return Array.from({ length: dimensions }, (_, i) => Math.round(Math.sin(seed + i) * 1e6) / 1e6);
}

export async function startFakeGemini(): Promise<FakeGemini> {
  let behaviour: GeminiBehaviour = { kind: 'ok' };
  let counter = 0;
  const requests: RecordedRequest[] = [];

  const server = createServer((req, res) => {
    const n = ++counter;
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
      requests.push({ path: req.url ?? '', method: req.method ?? '', headers: req.headers, body });
      try {
        const route = validate(req, body);
        respond(res, behaviour, route, n, req.headers['x-goog-api-key']);
      } catch (err) {
        // A bug in the fake must show up as a failing request, not crash the test process.
        if (err instanceof RequestError) sendError(res, err.status, err.grpcStatus, err.message, err.details);
        else sendError(res, 500, 'INTERNAL', `fake server fault: ${String(err)}`);
      }
    });
  });
  const local = await listenLocal(server);

  return {
    url: `${local.origin}/v1beta`,
    requests,
    behave(b) {
      behaviour = b;
    },
    close: () => local.close(),
  };
}

interface Route {
  model: string;
  method: Method;
  /** streamGenerateContent?alt=sse; without it the real API streams one JSON array. */
  sse: boolean;
  body: Json;
}

const ROUTE = /^\/v1beta\/models\/([^/:?]+):(generateContent|streamGenerateContent|embedContent|batchEmbedContents)$/;

/** Checks the request as the real API would, in its order: route, key, body. */
function validate(req: IncomingMessage, body: unknown): Route {
  const url = new URL(req.url ?? '/', 'http://fake');
  const match = ROUTE.exec(url.pathname);
  if (req.method !== 'POST' || match === null) throw new RequestError(404, 'NOT_FOUND', `${req.method ?? ''} ${url.pathname}: not found`);
  const key = req.headers['x-goog-api-key'];
  if (key === undefined || key === '') {
    throw new RequestError(
      403,
      'PERMISSION_DENIED',
      "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    );
  }
  if (key !== FAKE_GEMINI_API_KEY) {
    throw new RequestError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
    ]);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new RequestError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
  const model = decodeURIComponent(match[1] as string);
  const method = match[2] as Method;
  const b = body as Json;
  if (method === 'embedContent') validateEmbed(b, '', undefined);
  else if (method === 'batchEmbedContents') validateBatch(b, model);
  else validateGenerate(b, model);
  return { model, method, sse: url.searchParams.get('alt') === 'sse', body: b };
}

function bad(message: string): never {
  throw new RequestError(400, 'INVALID_ARGUMENT', message);
}

/** The real API refuses unknown fields rather than ignoring them. */
function knownFields(value: Json, where: string, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) bad(`Invalid JSON payload received. Unknown name "${key}" at '${where}': Cannot find field.`);
  }
}

const REQUEST_FIELDS = ['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent'];
const CONFIG_FIELDS = [
  'stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'candidateCount', 'maxOutputTokens', 'temperature',
  'topP', 'topK', 'seed', 'presencePenalty', 'frequencyPenalty', 'responseLogprobs', 'logprobs', 'thinkingConfig', 'responseModalities',
];
const PART_FIELDS = ['text', 'inlineData', 'functionCall', 'functionResponse', 'fileData', 'executableCode', 'codeExecutionResult', 'thought', 'thoughtSignature'];
const PART_DATA = ['text', 'inlineData', 'functionCall', 'functionResponse', 'fileData', 'executableCode', 'codeExecutionResult'];

function validateGenerate(b: Json, model: string): void {
  knownFields(b, '', REQUEST_FIELDS);
  if (!Array.isArray(b.contents) || b.contents.length === 0) bad('* GenerateContentRequest.contents: contents is not specified');
  const contents = b.contents as Json[];
  contents.forEach((content, i) => {
    if (content.role !== 'user' && content.role !== 'model') bad(`Please use a valid role: user, model. (contents[${i}])`);
    validateParts(content, `contents[${i}]`);
  });
  if (b.systemInstruction !== undefined) validateParts(b.systemInstruction as Json, 'systemInstruction');
  validateFunctionTurns(contents);
  validateSignatures(contents, model);
  validateTools(b);
  const config = b.generationConfig;
  if (config !== undefined) {
    if (typeof config !== 'object' || config === null) bad('generationConfig: expected an object');
    const c = config as Json;
    knownFields(c, 'generation_config', CONFIG_FIELDS);
    if (c.temperature !== undefined && (typeof c.temperature !== 'number' || c.temperature < 0 || c.temperature > 2)) bad('* GenerateContentRequest.generation_config.temperature: must be in [0, 2]');
    if (c.topP !== undefined && (typeof c.topP !== 'number' || c.topP < 0 || c.topP > 1)) bad('* GenerateContentRequest.generation_config.top_p: must be in [0, 1]');
    if (c.maxOutputTokens !== undefined && (!Number.isInteger(c.maxOutputTokens) || (c.maxOutputTokens as number) < 1)) bad('* GenerateContentRequest.generation_config.max_output_tokens: must be positive');
    if (c.candidateCount !== undefined && (!Number.isInteger(c.candidateCount) || (c.candidateCount as number) < 1 || (c.candidateCount as number) > 8)) {
      bad('* GenerateContentRequest.generation_config.candidate_count: must be in [1, 8]');
    }
    // As Gemini 2.5 answers: penalties are refused outright, JSON mode beside function declarations before Gemini 3.
    if (c.presencePenalty !== undefined || c.frequencyPenalty !== undefined) bad(`Penalty is not enabled for models/${model}`);
    if (c.responseMimeType === 'application/json' && b.tools !== undefined && !/gemini-([3-9]|\d\d)/.test(model)) {
      bad("Function calling with a response mime type: 'application/json' is unsupported");
    }
    if ((c.responseJsonSchema !== undefined || c.responseSchema !== undefined) && c.responseMimeType !== 'application/json') {
      bad('* GenerateContentRequest.generation_config.response_mime_type: must be application/json when a response schema is set');
    }
  }
}

function validateParts(content: Json, where: string): void {
  if (typeof content !== 'object' || content === null || !Array.isArray(content.parts) || content.parts.length === 0) {
    bad(`* GenerateContentRequest.${where}.parts: contents.parts must not be empty.`);
  }
  knownFields(content, where, ['role', 'parts']);
  (content.parts as Json[]).forEach((part, j) => {
    knownFields(part, `${where}.parts[${j}]`, PART_FIELDS);
    const data = PART_DATA.filter((k) => part[k] !== undefined);
    if (data.length !== 1) bad(`* GenerateContentRequest.${where}.parts[${j}].data: required oneof field 'data' must have one initialized field`);
    if (part.text !== undefined && (typeof part.text !== 'string' || part.text === '')) {
      bad('Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again.');
    }
    const inline = part.inlineData as Json | undefined;
    if (inline !== undefined && (typeof inline.mimeType !== 'string' || typeof inline.data !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(inline.data))) {
      bad(`* GenerateContentRequest.${where}.parts[${j}].inline_data: mime_type and base64 data are required`);
    }
    const response = part.functionResponse as Json | undefined;
    if (response !== undefined && (typeof response.name !== 'string' || typeof response.response !== 'object' || response.response === null || Array.isArray(response.response))) {
      bad(`* GenerateContentRequest.${where}.parts[${j}].function_response: name and an object response are required`);
    }
  });
}

/** A user turn answering function calls must answer each call of the model turn before it, by name. */
function validateFunctionTurns(contents: Json[]): void {
  contents.forEach((content, i) => {
    const responses = (content.parts as Json[]).filter((p) => p.functionResponse !== undefined);
    if (responses.length === 0) return;
    const previous = contents[i - 1];
    const calls = previous?.role === 'model' ? (previous.parts as Json[]).filter((p) => p.functionCall !== undefined) : [];
    if (calls.length !== responses.length) {
      bad('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.');
    }
    const names = calls.map((p) => (p.functionCall as Json).name).sort();
    const answered = responses.map((p) => (p.functionResponse as Json).name).sort();
    if (JSON.stringify(names) !== JSON.stringify(answered)) bad('Please ensure that function response turn comes immediately after a function call turn.');
  });
}

/**
 * Gemini 3 requires the signature back on the first function call of each step of the current
 * turn (everything since the last user text); every model rejects a signature it did not issue.
 */
function validateSignatures(contents: Json[], model: string): void {
  const issued = new Set<unknown>([FAKE_FUNCTION_CALL.thoughtSignature, SKIP_SIGNATURE]);
  let turnStart = 0;
  contents.forEach((content, i) => {
    const parts = content.parts as Json[];
    if (content.role === 'user' && parts.some((p) => p.text !== undefined)) turnStart = i;
    for (const part of parts) if (part.thoughtSignature !== undefined && !issued.has(part.thoughtSignature)) bad('Corrupted thought signature.');
  });
  const generation = /gemini-(\d+)/.exec(model);
  if (generation === null || Number(generation[1]) < 3) return;
  contents.slice(turnStart).forEach((content, k) => {
    const first = (content.parts as Json[]).find((p) => p.functionCall !== undefined);
    if (content.role === 'model' && first !== undefined && first.thoughtSignature === undefined) {
      bad(`Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly. Additional data, function call \`${String((first.functionCall as Json).name)}\`, position ${turnStart + k + 1}.`);
    }
  });
}

function validateTools(b: Json): void {
  if (b.tools !== undefined) {
    if (!Array.isArray(b.tools)) bad('tools: expected a list');
    for (const tool of b.tools as Json[]) {
      knownFields(tool, 'tools', ['functionDeclarations', 'googleSearch', 'codeExecution']);
      for (const decl of (tool.functionDeclarations ?? []) as Json[]) {
        knownFields(decl, 'tools.function_declarations', ['name', 'description', 'parameters', 'parametersJsonSchema', 'response', 'responseJsonSchema', 'behavior']);
        if (typeof decl.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/.test(decl.name)) bad('* GenerateContentRequest.tools[0].function_declarations[0].name: Invalid function name.');
        if (decl.parameters !== undefined && decl.parametersJsonSchema !== undefined) bad('parameters and parametersJsonSchema are mutually exclusive');
      }
    }
  }
  const config = (b.toolConfig as Json | undefined)?.functionCallingConfig as Json | undefined;
  if (config !== undefined && !['AUTO', 'ANY', 'NONE', 'VALIDATED'].includes(String(config.mode))) bad('* GenerateContentRequest.tool_config.function_calling_config.mode: invalid value');
}

function validateEmbed(b: Json, where: string, model: string | undefined): void {
  knownFields(b, where, ['model', 'content', 'taskType', 'title', 'outputDimensionality']);
  if (model !== undefined && b.model !== `models/${model}`) bad(`* BatchEmbedContentsRequest.${where}.model: the model of every request must be models/${model}`);
  validateParts(b.content as Json, `${where}content`);
  const dims = b.outputDimensionality;
  if (dims !== undefined && (!Number.isInteger(dims) || (dims as number) < 1 || (dims as number) > 3072)) bad('* EmbedContentRequest.output_dimensionality: must be in [1, 3072]');
}

function validateBatch(b: Json, model: string): void {
  knownFields(b, '', ['requests']);
  if (!Array.isArray(b.requests) || b.requests.length === 0) bad('* BatchEmbedContentsRequest.requests: requests is not specified');
  if (b.requests.length > FAKE_MAX_BATCH) bad('* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch');
  (b.requests as Json[]).forEach((r, i) => validateEmbed(r, `requests[${i}].`, model));
}

function sendError(res: ServerResponse, status: number, grpcStatus: string, message: string, details: Json[] = []): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
  const error: Json = { code: status, message, status: grpcStatus };
  if (details.length > 0) error.details = details;
  res.end(JSON.stringify({ error }, null, 2));
}

function respond(res: ServerResponse, behaviour: GeminiBehaviour, route: Route, n: number, sentKey: string | string[] | undefined): void {
  switch (behaviour.kind) {
    case 'hang':
      return;
    case 'error': {
      if (behaviour.retryAfter !== undefined) res.setHeader('retry-after', behaviour.retryAfter);
      const details: Json[] = [];
      if (behaviour.reason !== undefined) details.push({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: behaviour.reason, domain: 'googleapis.com' });
      if (behaviour.retryDelay !== undefined) details.push({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: behaviour.retryDelay });
      const message = behaviour.echoKey === true ? `${behaviour.message} (key ${String(sentKey)})` : behaviour.message;
      sendError(res, behaviour.status, behaviour.grpcStatus, message, details);
      return;
    }
    case 'malformed':
      if (route.method === 'streamGenerateContent' && route.sse) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('data: {"candidates": [{"content": {"parts": [{"text": "Hel\r\n\r\n');
      } else {
        res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
        res.end('{"candidates": [{"content": {"parts": [{"text": "Hel');
      }
      return;
    default:
      break;
  }
  if (route.method === 'embedContent' || route.method === 'batchEmbedContents') {
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(embedAnswer(route)));
    return;
  }
  const responseId = `fakeResp${String(n).padStart(12, '0')}`;
  const frames = generation(behaviour, route, responseId);
  if (route.method === 'generateContent') {
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(merge(frames), null, 2));
    return;
  }
  if (!route.sse) {
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(frames, null, 2));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const write = (data: unknown): void => {
    res.write(`data: ${JSON.stringify(data)}\r\n\r\n`);
  };
  if (behaviour.kind === 'cut_stream') {
    frames.slice(0, behaviour.afterChunks).forEach(write);
  } else if (behaviour.kind === 'stream_error') {
    frames.slice(0, behaviour.afterChunks).forEach(write);
    write({ error: { code: behaviour.code ?? 503, message: behaviour.message ?? 'The model is overloaded. Please try again later.', status: behaviour.grpcStatus ?? 'UNAVAILABLE' } });
  } else {
    frames.forEach(write);
  }
  res.end();
}

function embedAnswer(route: Route): Json {
  const vector = (r: Json): Json => {
    const text = ((r.content as Json).parts as Json[]).map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
    return { values: fakeEmbedding(text, typeof r.outputDimensionality === 'number' ? r.outputDimensionality : FAKE_EMBEDDING_DIMENSIONS) };
  };
  if (route.method === 'embedContent') return { embedding: vector(route.body) };
  return { embeddings: (route.body.requests as Json[]).map(vector) };
}

/** One candidate's output: word pieces (one token each) and function calls, then its finish reason. */
interface CandidatePlan {
  pieces: string[];
  calls: Json[];
  finishReason: string;
}

/** Splits text into word-sized pieces, each counted as one output token. */
function words(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\s)(?=\S)/);
}

const FILTERS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII']);

/** Honours stopSequences and maxOutputTokens like the real API, so tests can provoke those finish reasons. */
function plan(behaviour: GeminiBehaviour, config: Json, request: Json, index: number): CandidatePlan {
  if (behaviour.kind === 'tool_call') {
    const allowed = ((request.toolConfig as Json | undefined)?.functionCallingConfig as Json | undefined)?.allowedFunctionNames as string[] | undefined;
    const declared = (((request.tools as Json[] | undefined)?.[0]?.functionDeclarations ?? []) as Json[]).map((d) => String(d.name));
    const name = allowed?.[0] ?? declared[0] ?? 'get_weather';
    const calls = Array.from({ length: behaviour.calls ?? 1 }, (_, i) => {
      const part: Json = { functionCall: { name, args: { ...FAKE_FUNCTION_CALL.args } } };
      // Of parallel calls only the first carries a signature.
      if (i === 0) part.thoughtSignature = FAKE_FUNCTION_CALL.thoughtSignature;
      return part;
    });
    return { pieces: words(behaviour.text ?? ''), calls, finishReason: 'STOP' };
  }
  const base = behaviour.kind === 'ok' && behaviour.text !== undefined ? behaviour.text : FAKE_DEFAULT_TEXT;
  const text = index === 0 ? base : `${base} (variant ${index})`;
  if (behaviour.kind === 'ok' && behaviour.finishReason !== undefined && FILTERS.has(behaviour.finishReason)) {
    return { pieces: [], calls: [], finishReason: behaviour.finishReason };
  }
  let finishReason = behaviour.kind === 'ok' && behaviour.finishReason !== undefined ? behaviour.finishReason : 'STOP';
  let cut = text.length;
  const stops = Array.isArray(config.stopSequences) ? (config.stopSequences as unknown[]).filter((s): s is string => typeof s === 'string' && s !== '') : [];
  for (const s of stops) {
    const at = text.indexOf(s);
    if (at >= 0 && at < cut) cut = at;
  }
  let pieces = words(text.slice(0, cut));
  const max = typeof config.maxOutputTokens === 'number' ? config.maxOutputTokens : Infinity;
  if (pieces.length > max) {
    pieces = pieces.slice(0, max);
    finishReason = 'MAX_TOKENS';
  }
  return { pieces, calls: [], finishReason };
}

/**
 * The stream's GenerateContentResponses: a word per chunk for every candidate, function calls
 * whole in one chunk, the finish reason on each candidate's last chunk, and cumulative usage on
 * every chunk as the real API sends it. The non-streaming answer is these merged.
 */
function generation(behaviour: GeminiBehaviour, route: Route, responseId: string): Json[] {
  const envelope = { modelVersion: `${route.model}-fake-001`, responseId };
  const usage = (candidates: number, prompt = true): Json => {
    const u: Json = { promptTokenCount: FAKE_USAGE.promptTokenCount, totalTokenCount: FAKE_USAGE.promptTokenCount };
    if (!prompt) return u;
    Object.assign(u, {
      candidatesTokenCount: candidates,
      totalTokenCount: FAKE_USAGE.promptTokenCount + candidates + FAKE_USAGE.thoughtsTokenCount,
      cachedContentTokenCount: FAKE_USAGE.cachedContentTokenCount,
      thoughtsTokenCount: FAKE_USAGE.thoughtsTokenCount,
    });
    if (candidates === 0) delete u.candidatesTokenCount; // proto3 JSON leaves zeros out
    return u;
  };
  if (behaviour.kind === 'blocked') {
    return [{ promptFeedback: { blockReason: 'SAFETY', safetyRatings: [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH' }] }, usageMetadata: usage(0, false), ...envelope }];
  }
  const config = (route.body.generationConfig ?? {}) as Json;
  const count = typeof config.candidateCount === 'number' ? config.candidateCount : 1;
  const plans = Array.from({ length: count }, (_, i) => plan(behaviour, config, route.body, i));
  const steps = Math.max(1, ...plans.map((p) => p.pieces.length + (p.calls.length > 0 ? 1 : 0)));
  const frames: Json[] = [];
  let produced = 0;
  for (let step = 0; step < steps; step++) {
    const candidates: Json[] = [];
    plans.forEach((p, index) => {
      const parts: Json[] = [];
      if (step < p.pieces.length) {
        parts.push({ text: p.pieces[step] });
        produced++;
      } else if (step === p.pieces.length && p.calls.length > 0) {
        parts.push(...p.calls);
        produced += p.calls.length;
      }
      const last = step === Math.max(0, p.pieces.length + (p.calls.length > 0 ? 1 : 0) - 1);
      if (parts.length === 0 && !last) return;
      const candidate: Json = {};
      if (parts.length > 0) candidate.content = { parts, role: 'model' };
      if (last) candidate.finishReason = p.finishReason;
      if (index > 0) candidate.index = index; // proto3 JSON: a zero index is left out
      candidates.push(candidate);
    });
    frames.push({ candidates, usageMetadata: usage(produced), ...envelope });
  }
  return frames;
}

/** The non-streaming answer: each candidate's parts joined, the last usage and finish reasons. */
function merge(frames: Json[]): Json {
  const last = frames[frames.length - 1] as Json;
  if (last.candidates === undefined) return last;
  const byIndex = new Map<number, Json>();
  for (const frame of frames) {
    for (const c of frame.candidates as Json[]) {
      const index = typeof c.index === 'number' ? c.index : 0;
      const merged = byIndex.get(index) ?? { ...(index > 0 ? { index } : {}) };
      const parts = ((c.content as Json | undefined)?.parts ?? []) as Json[];
      if (parts.length > 0) {
        const content = (merged.content ?? { parts: [], role: 'model' }) as Json;
        const into = content.parts as Json[];
        for (const part of parts) {
          const tail = into[into.length - 1];
          if (typeof part.text === 'string' && typeof tail?.text === 'string') tail.text = tail.text + part.text;
          else into.push({ ...part });
        }
        merged.content = content;
      }
      if (c.finishReason !== undefined) merged.finishReason = c.finishReason;
      byIndex.set(index, merged);
    }
  }
  return { candidates: [...byIndex.keys()].sort((a, b) => a - b).map((k) => byIndex.get(k)), usageMetadata: last.usageMetadata, modelVersion: last.modelVersion, responseId: last.responseId };
}
