import { describe, expect, it } from 'vitest';
import { SseScanner } from './sse-scanner.js';

interface Seen { name: string | undefined; data: string }

/** Feeds the pieces one by one and collects every completed event. */
function scan(pieces: string[]): { events: Seen[]; scanner: SseScanner } {
  const scanner = new SseScanner();
  const events: Seen[] = [];
  for (const piece of pieces) {
    scanner.feed(piece);
    for (let i = 0; i < scanner.count; i++) events.push({ name: scanner.names[i], data: scanner.data[i]! });
  }
  return { events, scanner };
}

const STREAM = 'data: {"a":1}\n\n: keep-alive comment\n\ndata:{"b":2}\n\nevent: error\ndata: {"c":3}\n\ndata: [DONE]\n\n';
const EXPECTED: Seen[] = [
  { name: undefined, data: '{"a":1}' },
  { name: undefined, data: '{"b":2}' },
  { name: 'error', data: '{"c":3}' },
  { name: undefined, data: '[DONE]' },
];

describe('SseScanner: a long line', () => {
  it('holds a line across reads without rescanning it, and counts what it holds', () => {
    const scanner = new SseScanner();
    scanner.feed('data: {"a":"');
    for (let i = 0; i < 100; i++) scanner.feed('y'.repeat(1000));
    expect(scanner.count).toBe(0);
    expect(scanner.pendingLength).toBe('data: {"a":"'.length + 100_000);
    scanner.feed('"}\n\n');
    expect(scanner.count).toBe(1);
    expect(scanner.data[0]).toBe(`{"a":"${'y'.repeat(100_000)}"}`);
    expect(scanner.pendingLength).toBe(0);
  });
});

describe('SseScanner', () => {
  it('reads events, drops one space after the colon and ignores comments', () => {
    expect(scan([STREAM]).events).toEqual(EXPECTED);
  });

  it('gives the same events however the text is split, down to single characters', () => {
    expect(scan(STREAM.split('')).events).toEqual(EXPECTED);
    for (let cut = 1; cut < STREAM.length; cut++) {
      expect(scan([STREAM.slice(0, cut), STREAM.slice(cut)]).events).toEqual(EXPECTED);
    }
  });

  it('accepts CRLF and lone CR line ends, including a CRLF split across reads', () => {
    const crlf = STREAM.replace(/\n/g, '\r\n');
    expect(scan([crlf]).events).toEqual(EXPECTED);
    expect(scan(crlf.split('')).events).toEqual(EXPECTED);
    const cr = STREAM.replace(/\n/g, '\r');
    expect(scan([cr]).events).toEqual(EXPECTED);
    expect(scan(cr.split('')).events).toEqual(EXPECTED);
  });

  it('drops a byte-order mark at the start of the stream only', () => {
    // Later, a BOM is part of the field name, which is then unknown and ignored.
    expect(scan(['\ufeffdata: 1\n\n', '\ufeffdata: 2\n\n']).events).toEqual([{ name: undefined, data: '1' }]);
    // An empty first read (a BOM split across reads decodes to nothing) does not end the start.
    expect(scan(['', '\ufeffdata: 1\n\n']).events).toEqual([{ name: undefined, data: '1' }]);
  });

  it('joins several data lines with LF and treats a bare "data" line as an empty value', () => {
    expect(scan(['data: one\ndata:two\ndata\n\n']).events).toEqual([{ name: undefined, data: 'one\ntwo\n' }]);
  });

  it('tells which events were joined from several data lines', () => {
    const scanner = new SseScanner();
    scanner.feed('data: a\ndata: b\n\ndata: c\n\n');
    expect(scanner.count).toBe(2);
    expect([scanner.joined[0], scanner.joined[1]]).toEqual([true, false]);
  });

  it('ignores id, retry, unknown fields and blank lines with no data', () => {
    expect(scan(['id: 7\nretry: 100\nfoo: bar\n\n\n\ndatax: no\n\ndata: yes\n\n']).events).toEqual([{ name: undefined, data: 'yes' }]);
  });

  it('keeps an event name only for its own event', () => {
    expect(scan(['event: ping\ndata: 1\n\ndata: 2\n\n']).events).toEqual([
      { name: 'ping', data: '1' },
      { name: undefined, data: '2' },
    ]);
  });

  it('holds back an event until its blank line and reports an unterminated one at the end', () => {
    const { events, scanner } = scan(['data: {"a":1}\n\ndata: [DONE]']);
    expect(events).toEqual([{ name: undefined, data: '{"a":1}' }]);
    expect(scanner.unterminated()).toBe('[DONE]');
    expect(scanner.unterminated()).toBeUndefined();
    const partial = scan(['data: {"a":1}\n']).scanner;
    expect(partial.count).toBe(0);
    expect(partial.unterminated()).toBe('{"a":1}');
  });
});

describe('SseScanner: events in the canonical form', () => {
  /** The verbatim events of one feed as the text they span, each checked against its frame. */
  function verbatim(scanner: SseScanner, text: string): string[] {
    const spans: string[] = [];
    for (let i = 0, start = 0; i < scanner.verbatimCount; i++) {
      const span = text.slice(start, scanner.ends[i]);
      expect(span).toBe(`data: ${scanner.data[i]}\n\n`);
      spans.push(span);
      start = scanner.ends[i]!;
    }
    return spans;
  }

  it('counts a feed of back-to-back `data: ` events, with where each ends', () => {
    const scanner = new SseScanner();
    const text = 'data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n';
    scanner.feed(text);
    expect(scanner.count).toBe(3);
    expect(scanner.verbatimCount).toBe(3);
    expect(verbatim(scanner, text)).toHaveLength(3);
    expect(scanner.ends[2]).toBe(text.length);
  });

  it.each([
    ['a comment', 'data: 1\n\n: ping\n\ndata: 2\n\n', 1],
    ['an event name', 'data: 1\n\nevent: x\ndata: 2\n\n', 1],
    ['no space after the colon', 'data: 1\n\ndata:2\n\n', 1],
    ['two spaces after the colon', 'data: 1\n\ndata:  2\n\n', 2],
    ['a bare data line', 'data: 1\n\ndata\n\n', 1],
    ['an id line', 'data: 1\n\nid: 4\ndata: 2\n\n', 1],
    ['an extra blank line', 'data: 1\n\n\ndata: 2\n\n', 1],
    ['several data lines', 'data: 1\n\ndata: 2\ndata: 3\n\n', 1],
    ['CRLF line ends', 'data: 1\r\n\r\ndata: 2\r\n\r\n', 0],
    ['a byte-order mark', '\ufeffdata: 1\n\n', 0],
  ])('stops counting at %s', (_what, text, expected) => {
    const scanner = new SseScanner();
    scanner.feed(text);
    expect(scanner.verbatimCount).toBe(expected);
    verbatim(scanner, text);
  });

  it('counts nothing in a feed that completes an event begun before it, nor after a held CR', () => {
    const scanner = new SseScanner();
    scanner.feed('data: {"a"');
    expect(scanner.verbatimCount).toBe(0);
    scanner.feed(':1}\n\ndata: 2\n\n');
    expect(scanner.count).toBe(2);
    expect(scanner.verbatimCount).toBe(0);
    scanner.feed('data: 3\n\ndata: 4\n');
    expect(scanner.count).toBe(1);
    expect(scanner.verbatimCount).toBe(1);
    scanner.feed('\n');
    expect(scanner.verbatimCount).toBe(0);
    scanner.feed('data: 5\r');
    scanner.feed('\ndata: 6\n\n');
    expect(scanner.verbatimCount).toBe(0);
  });

  it('matches the frames at every split of a mixed stream', () => {
    for (let cut = 0; cut <= STREAM.length; cut++) {
      const scanner = new SseScanner();
      for (const piece of [STREAM.slice(0, cut), STREAM.slice(cut)]) {
        scanner.feed(piece);
        verbatim(scanner, piece);
      }
    }
  });
});

describe('SseScanner: the arrays every scanner shares', () => {
  const fed = (scanner: SseScanner, text: string): string[] => {
    scanner.feed(text);
    return scanner.data.slice(0, scanner.count);
  };

  it('gives each feed its own events when several streams feed in turn, an event held across the others', () => {
    const a = new SseScanner();
    const b = new SseScanner();
    expect(fed(a, 'data: a1\n\ndata: a2\n\ndata: a3')).toEqual(['a1', 'a2']);
    expect(fed(b, 'data: b1\n\n')).toEqual(['b1']);
    expect(fed(b, 'data: b2\n\ndata: b3\n\ndata: b4\n\n')).toEqual(['b2', 'b3', 'b4']);
    expect(fed(a, '\n\n')).toEqual(['a3']);
  });

  it('lets go of the strings of the feed before', () => {
    const a = new SseScanner();
    fed(a, `data: ${'x'.repeat(1_000)}\n\ndata: y\n\ndata: z\n\n`);
    const b = new SseScanner();
    expect(fed(b, 'data: only\n\n')).toEqual(['only']);
    expect(b.data.slice(0, 3)).toEqual(['only', '', '']);
  });
});
