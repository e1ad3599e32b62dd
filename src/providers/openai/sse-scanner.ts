/**
 * An incremental server-sent-events scanner for the streaming hot path. It does the same job as
 * eventsource-parser (via ../http/sse.ts) but hands completed events to its caller in a reusable
 * batch instead of through a callback and a second async generator: on a typical OpenAI stream
 * that extra layer costs more than the scanning itself (see the measurement in the adapter's
 * report). It follows the WHATWG event-stream rules that matter for chat completions: lines end
 * in LF, CRLF or a lone CR (also when the pair is split across reads), a leading BOM is dropped,
 * `:` lines are comments, one optional space after the colon is dropped, several `data:` lines
 * join with LF, and an event is complete only at a blank line. `id:` and `retry:` are ignored:
 * we never reconnect.
 */

/**
 * Where every scanner puts the events of a feed. A stream's own arrays, grown to a read's twenty-odd
 * events, were 2 KB of its allocations; a feed's events are read at once, before anything else
 * can feed, so one set serves all streams.
 */
const SHARED = {
  data: [] as string[],
  names: [] as Array<string | undefined>,
  joined: [] as boolean[],
  ends: [] as number[],
  /** Events of the last feed, whose strings the arrays hold until the next feed lets them go. */
  held: 0,
};

export class SseScanner {
  /**
   * Completed events of the last `feed` are `data[0..count)`, in order, valid until the next
   * `feed` of any scanner (the arrays are shared: read them before anything else can feed). They
   * are reused rather than emptied: truncating them frees their storage and costs a reallocation.
   */
  get count(): number {
    return this.filled;
  }
  readonly data = SHARED.data;
  /** The `event:` field of each completed event, or undefined for the default event. */
  readonly names = SHARED.names;
  /** Whether each completed event's data was joined from several `data:` lines (so holds LFs). */
  readonly joined = SHARED.joined;

  /**
   * How many of the last feed's first events were written in the canonical form, `data: <data>`
   * and a blank line with LF line ends, back to back from the feed's first character with nothing
   * held before it. The fed text up to `ends[i]` (just after event i's blank line, for i below
   * this count) is then exactly what the relay writes for events 0..i, so the bytes read can be
   * written instead.
   */
  get verbatimCount(): number {
    return this.verbatimEvents;
  }
  readonly ends = SHARED.ends;

  private filled = 0;
  /** A byte-order mark may open the stream, and is not part of the first line. */
  private atStart = true;
  /** Text after the last line end, waiting for the rest of its line. */
  private rest = '';
  /** The previous read ended in CR, so an LF that starts the next read belongs to it. */
  private afterCr = false;
  private pendingData: string | undefined;
  private pendingName: string | undefined;
  private pendingJoined = false;
  /** The feed is still canonical up to where it has been scanned (see verbatimCount). */
  private verbatim = false;
  private verbatimEvents = 0;

  /** Text held for an event not yet complete: its data so far and its unended line. */
  get pendingLength(): number {
    return this.rest.length + (this.pendingData?.length ?? 0);
  }

  /** Scans the next piece of decoded text; completed events land in `data` and `names`. */
  feed(text: string): void {
    // The last feed's event texts, whichever scanner made them, are not kept alive by the arrays.
    for (let i = 0; i < SHARED.held; i++) SHARED.data[i] = '';
    SHARED.held = 0;
    this.filled = 0;
    this.verbatimEvents = 0;
    this.verbatim = this.rest === '' && this.pendingData === undefined && !this.afterCr;
    // The rest of a long line: only the new text can end it, so the held part is not searched again.
    if (this.rest !== '' && !this.afterCr && text.indexOf('\n') === -1 && text.indexOf('\r') === -1) {
      this.rest += text;
      return;
    }
    if (this.atStart && text !== '') {
      this.atStart = false;
      if (text.charCodeAt(0) === 0xfeff) {
        text = text.slice(1);
        this.verbatim = false;
      }
    }
    if (this.afterCr) {
      this.afterCr = false;
      if (text.charCodeAt(0) === 10) text = text.slice(1);
    }
    if (this.rest !== '') {
      text = this.rest + text;
      this.rest = '';
    }
    // A lone CR is a legal line end; normalising once here keeps the line loop to one indexOf.
    if (text.indexOf('\r') !== -1) {
      this.verbatim = false;
      if (text.charCodeAt(text.length - 1) === 13) this.afterCr = true;
      text = text.replace(CR_LINE_END, '\n');
    }
    let start = 0;
    let end = text.indexOf('\n');
    while (end !== -1) {
      if (end === start) this.dispatch(end + 1);
      else this.line(text, start, end);
      start = end + 1;
      end = text.indexOf('\n', start);
    }
    if (start < text.length) this.rest = start === 0 ? text : text.slice(start);
  }

  /**
   * The data of an event the body ended in the middle of (no blank line after it), or undefined.
   * Per the spec such an event is dropped; the caller only uses it to accept a final `[DONE]`
   * whose blank line never came.
   */
  unterminated(): string | undefined {
    if (this.rest !== '') {
      const text = this.rest;
      this.rest = '';
      this.line(text, 0, text.length);
    }
    const data = this.pendingData;
    this.pendingData = undefined;
    this.pendingName = undefined;
    this.pendingJoined = false;
    return data;
  }

  private line(text: string, start: number, end: number): void {
    const first = text.charCodeAt(start);
    if (first === 100 /* d */ && text.startsWith('data', start)) {
      const colon = start + 4;
      if (colon !== end && text.charCodeAt(colon) === 58 && text.charCodeAt(colon + 1) === 32) return this.appendData(text.slice(colon + 2, end));
      this.verbatim = false;
      if (colon === end) return this.appendData('');
      if (text.charCodeAt(colon) !== 58) return;
      return this.appendData(text.slice(colon + 1, end));
    }
    // Anything but a `data: ` line is left out of, or changes, what the relay writes.
    this.verbatim = false;
    if (first === 58 /* : */) return;
    if (first === 101 /* e */ && text.startsWith('event', start)) {
      const colon = start + 5;
      if (colon === end) {
        this.pendingName = undefined;
        return;
      }
      if (text.charCodeAt(colon) !== 58) return;
      const name = text.slice(text.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1, end);
      this.pendingName = name === '' ? undefined : name;
    }
  }

  private appendData(value: string): void {
    if (this.pendingData === undefined) {
      this.pendingData = value;
    } else {
      this.pendingData = `${this.pendingData}\n${value}`;
      this.pendingJoined = true;
      this.verbatim = false;
    }
  }

  /** `after`: the index in the fed text just after the blank line that ends the event. */
  private dispatch(after: number): void {
    const data = this.pendingData;
    if (data !== undefined) {
      this.data[this.filled] = data;
      this.names[this.filled] = this.pendingName;
      this.joined[this.filled] = this.pendingJoined;
      this.filled++;
      SHARED.held = this.filled;
      if (this.verbatim) {
        this.ends[this.verbatimEvents] = after;
        this.verbatimEvents = this.filled;
      }
    } else {
      this.verbatim = false;
    }
    this.pendingData = undefined;
    this.pendingName = undefined;
    this.pendingJoined = false;
  }
}

const CR_LINE_END = /\r\n?/g;
