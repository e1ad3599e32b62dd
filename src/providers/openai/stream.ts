/**
 * Relaying an OpenAI-compatible event stream. Chunks are passed on as the exact text the upstream
 * sent: parsing and re-serialising every chunk would halve throughput. Only cheap substring
 * checks run per chunk; JSON.parse runs only on the few chunks that carry usage or an error. The
 * check that a chunk is an object, opened and closed, catches what a cut or garbled stream
 * actually sends (a frame cut short), not every possible invalid JSON text.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import { GatewayError } from '../../errors/index.js';
import type { Usage } from '../../protocol/chat.js';
import type { ChatStream, StreamBatch, StreamPiece, WireBytes } from '../types.js';
import type { StreamedAnswer } from '../upstream/dispatched-call.js';
import { upstreamFault } from '../upstream/upstream-faults.js';
import { SseScanner } from './sse-scanner.js';
import { MAX_STREAM_EVENT_CHARS } from '../upstream/event-size.js';
import { errorDetail, malformed, reportedError } from './errors.js';
import { usageOf } from './usage.js';
import type { CancelSignal } from '../../util/cancellation.js';

export interface StreamContext {
  readonly providerId: string;
  /** Only to scrub it from relayed upstream messages. */
  readonly apiKey: string | undefined;
  readonly signal: CancelSignal;
}

const DONE = Symbol('done');

/**
 * An event whose JSON came on several `data:` lines holds LFs where the lines were joined, and is
 * relayed as one `data:` line: with the LFs in it, the caller's SSE parser would read the second
 * line as a field of its own and the SDK would fail to parse the first. Between JSON tokens a
 * line end is whitespace, so a space keeps the JSON the same.
 */
function oneLine(data: string): string {
  return data.replaceAll('\n', ' ');
}
const SKIP = Symbol('skip');

export class OpenAIChatStream implements ChatStream {
  private seenUsage: Usage | null = null;
  private iterated = false;

  constructor(
    private readonly res: StreamedAnswer,
    private readonly context: StreamContext,
  ) {}

  get usage(): Usage | null {
    return this.seenUsage;
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamBatch> {
    // The body can be read once; a second reader would see an empty body and report truncation.
    if (this.iterated) throw new GatewayError('internal_error', 'An upstream stream was iterated twice.');
    this.iterated = true;
    return this.batches();
  }

  private async *batches(): AsyncGenerator<StreamBatch> {
    const body = this.res.body;
    const scanner = new SseScanner();
    // StringDecoder, not TextDecoder: both keep a UTF-8 sequence split across reads whole, but
    // StringDecoder is about three times faster per chunk on Node 20.
    const decoder = new StringDecoder('utf8');
    const errors = new ErrorWordWatch();
    // Until a read holds a byte above 127, each read is whole characters on its own, and latin1
    // decodes it at half the cost of UTF-8; from the first such read on, the decoder takes over.
    let ascii = true;
    let done = false;
    try {
      // Leaving the loop at [DONE] does not close a connection the pool could reuse; the finally
      // block decides between draining and destroying.
      for await (const chunk of body) {
        if (ascii && !isAscii(chunk)) ascii = false;
        const text = ascii ? chunk.toString('latin1') : decoder.write(chunk);
        scanner.feed(text);
        if (scanner.pendingLength > MAX_STREAM_EVENT_CHARS) throw malformed(this.context.providerId, `a stream event longer than ${MAX_STREAM_EVENT_CHARS} characters`);
        const maybeError = errors.read(text, scanner.pendingLength > 0);
        const events = scanner.data;
        const names = scanner.names;
        const joined = scanner.joined;
        const batch: StreamPiece[] & { wire?: WireBytes } = [];
        let failure: Error | undefined;
        // The first events relayed unchanged, in the canonical form: their bytes are the frames.
        const verbatim = scanner.verbatimCount;
        let unchanged = 0;
        let unchangedSoFar = verbatim > 0;
        const count = scanner.count;
        for (let i = 0; i < count; i++) {
          let piece: StreamPiece | typeof DONE | typeof SKIP;
          const data = events[i] as string;
          try {
            piece = this.piece(joined[i] === true ? oneLine(data) : data, names[i], maybeError);
          } catch (err) {
            // What came before the error in this read is still delivered, then the error.
            failure = err instanceof Error ? err : new Error(String(err));
            break;
          }
          if (piece === DONE) {
            done = true;
            break;
          }
          if (piece === SKIP) {
            unchangedSoFar = false;
            continue;
          }
          // A usage-only chunk is relayed only to a caller who asked for it: not decided here.
          if (unchangedSoFar && i < verbatim && piece.data === data && piece.usageOnly !== true) unchanged++;
          else unchangedSoFar = false;
          batch.push(piece);
        }
        if (unchanged > 0) {
          const wire = wireOf(chunk, ascii, scanner.ends[unchanged - 1] as number, text.length, unchanged === count);
          if (wire !== null) batch.wire = { bytes: wire, pieces: unchanged };
        }
        if (batch.length > 0) yield batch;
        if (failure !== undefined) throw failure;
        if (done) break;
      }
      if (!done) {
        // A final [DONE] whose blank line never came still ends the stream properly. Bytes of an
        // incomplete UTF-8 sequence left in the decoder cannot complete a line, so are not fed.
        const last = scanner.unterminated();
        if (last === undefined || !last.startsWith('[DONE]')) {
          throw new GatewayError('upstream_stream_truncated', `Provider "${this.context.providerId}" ended the stream without [DONE].`);
        }
        done = true;
      }
    } catch (err) {
      throw err instanceof GatewayError ? err : this.transportFault(err);
    } finally {
      if (done) {
        body.discard();
      } else {
        // The caller stopped early or the stream failed: give the connection up rather than
        // reading a generation nobody will see.
        body.destroy();
      }
    }
  }

  /**
   * One event's verdict. The searches start with a letter, not a quote: V8 finds a needle by its
   * first character, and `"` is the commonest character in JSON (`"usage"` costs ~4x `usage"`).
   * `maybeError`: the read this event came in holds the word "error" somewhere (ErrorWordWatch).
   */
  private piece(data: string, name: string | undefined, maybeError: boolean): StreamPiece | typeof DONE | typeof SKIP {
    if (data.charCodeAt(0) !== 123 /* { */) return this.unusual(data, name, maybeError);
    if (data.charCodeAt(data.length - 1) !== 125 /* } */ && !data.trimEnd().endsWith('}')) {
      throw malformed(this.context.providerId, 'a stream event that is not a whole JSON object');
    }
    if (name === 'error') throw reportedError(this.context.providerId, this.context.apiKey, errorDetail(this.parse(data)));
    let parsed: unknown;
    if (maybeError && hasQuoted(data, 'rror"', 101 /* e */)) {
      parsed = this.parse(data);
      if (isErrorFrame(parsed)) throw reportedError(this.context.providerId, this.context.apiKey, errorDetail(parsed));
    }
    // Asked for usage, OpenAI sends `"usage":null` as the last key of every chunk but the usage
    // one. Last, it is the top-level key, and JSON's last duplicate wins: no usage in this chunk,
    // found without searching the whole event.
    if (data.endsWith(NULL_USAGE_END)) return { data };
    const at = afterQuoted(data, 'usage"');
    if (at === -1 || !objectFollows(data, at)) return { data };
    const chunk = (parsed ?? this.parse(data)) as { usage?: unknown; choices?: unknown };
    const usage = usageOf(chunk.usage);
    if (usage !== null) this.seenUsage = usage;
    const choices = chunk.choices;
    if (Array.isArray(choices)) return choices.length > 0 ? { data } : { data, usageOnly: true };
    // vLLM sends the usage-only chunk with `choices` null or absent; clients iterate `choices` (the
    // official SDK's stream helper, the Vercel AI SDK's schema), so it goes out with OpenAI's [].
    return { data: JSON.stringify({ ...chunk, choices: [] }), usageOnly: true };
  }

  private unusual(data: string, name: string | undefined, maybeError: boolean): StreamPiece | typeof DONE | typeof SKIP {
    if (data.startsWith('[DONE]')) return DONE;
    if (data === '') return SKIP;
    const trimmed = data.trimStart();
    if (trimmed !== data && trimmed.charCodeAt(0) === 123) return this.piece(trimmed, name, maybeError);
    if (name === 'error') throw reportedError(this.context.providerId, this.context.apiKey, { message: data, param: null });
    throw malformed(this.context.providerId, 'a stream event that is not JSON');
  }

  private parse(data: string): unknown {
    try {
      return JSON.parse(data);
    } catch (err) {
      throw malformed(this.context.providerId, 'a stream event that is not valid JSON', err);
    }
  }

  private transportFault(err: unknown): GatewayError {
    const fault = upstreamFault(err, this.context.signal);
    // The upstream was reached and had started answering: losing the connection now is a cut
    // stream, not an unreachable upstream.
    if (fault.code === 'upstream_unreachable' && !this.context.signal.aborted) {
      return new GatewayError('upstream_stream_truncated', `Provider "${this.context.providerId}" closed the connection mid-stream.`, { cause: err });
    }
    return fault;
  }
}

const NULL_USAGE_END = '"usage":null}';

/**
 * The bytes of a read's first events, `end` characters of its text, when they can be relayed
 * as read. An ASCII read's characters are its bytes. Otherwise only a read that is nothing but
 * such events can be (`all`, and its text ends there), and only if it is valid UTF-8: the
 * decoder would have replaced what is not, and the bytes must say what the frames say.
 */
function wireOf(chunk: Buffer, ascii: boolean, end: number, textLength: number, all: boolean): Uint8Array | null {
  if (ascii) return end === chunk.length ? chunk : chunk.subarray(0, end);
  return all && end === textLength && isUtf8(chunk) ? chunk : null;
}

/**
 * Whether the events completed by a read may hold the word `error"`, so that only those are
 * searched for an error frame: one search of the whole read costs less than one per event (a
 * read often holds many). An event completed later may have begun in an earlier read (so a hit
 * is carried while an event is unfinished), and the word may be split between two reads (so the
 * last characters of a read are searched again with the next one's first).
 */
class ErrorWordWatch {
  private carried = false;
  private tail = '';

  /** `unfinished`: the scanner holds the start of an event not yet complete after this read. */
  read(text: string, unfinished: boolean): boolean {
    const hit = this.carried || text.includes(ERROR_WORD) || (this.tail !== '' && mayEndTheWord(text) && (this.tail + text.slice(0, ERROR_WORD.length - 1)).includes(ERROR_WORD));
    this.carried = hit && unfinished;
    this.tail = text.length >= ERROR_WORD.length - 1 ? text.slice(1 - ERROR_WORD.length) : (this.tail + text).slice(1 - ERROR_WORD.length);
    return hit;
  }
}

const ERROR_WORD = 'rror"';

/** A read that finishes a word begun in the one before starts with a letter of its end: r, o or `"` (most start with `d`). */
function mayEndTheWord(text: string): boolean {
  const first = text.charCodeAt(0);
  return first === 114 /* r */ || first === 111 /* o */ || first === 34 /* " */;
}

function isErrorFrame(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const frame = value as { error?: unknown; object?: unknown };
  return (frame.error !== undefined && frame.error !== null) || frame.object === 'error';
}

/**
 * Whether the quoted word whose tail is `tail` (e.g. `"error"` found as `rror"`, with `head` its
 * first letter) occurs as a key or a whole string value. A quote cannot appear unescaped inside a
 * JSON string, so text inside the caller's content never matches.
 */
function hasQuoted(data: string, tail: string, head: number): boolean {
  let i = data.indexOf(tail, 2);
  while (i !== -1) {
    if (data.charCodeAt(i - 1) === head && data.charCodeAt(i - 2) === 34) return true;
    i = data.indexOf(tail, i + tail.length);
  }
  return false;
}

/** The index just after `"<word>"`, searched for as `<word>"` (see above), or -1. */
function afterQuoted(data: string, wordAndQuote: string): number {
  let i = data.indexOf(wordAndQuote, 1);
  while (i !== -1) {
    if (data.charCodeAt(i - 1) === 34) return i + wordAndQuote.length;
    i = data.indexOf(wordAndQuote, i + wordAndQuote.length);
  }
  return -1;
}

/** Whether `: {` (any JSON whitespace) follows index `i`: `"usage":null` is skipped unparsed. */
function objectFollows(data: string, i: number): boolean {
  let c = data.charCodeAt(i);
  while (c === 32 || c === 10 || c === 13 || c === 9) c = data.charCodeAt(++i);
  if (c !== 58 /* : */) return false;
  c = data.charCodeAt(++i);
  while (c === 32 || c === 10 || c === 13 || c === 9) c = data.charCodeAt(++i);
  return c === 123;
}

