import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import { FAKE_ANTHROPIC_API_KEY, FAKE_DEFAULT_TEXT, FAKE_INPUT_USAGE, startFakeAnthropic, type FakeAnthropic } from './anthropic-server.js';

let fake: FakeAnthropic;

const goodHeaders = { 'content-type': 'application/json', 'x-api-key': FAKE_ANTHROPIC_API_KEY, 'anthropic-version': '2023-06-01' };
const goodBody = { model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] };

function post(body: unknown, headers: Record<string, string> = goodHeaders, signal?: AbortSignal): Promise<Response> {
  return fetch(`${fake.url}/messages`, { method: 'POST', headers, body: JSON.stringify(body), signal });
}

/** Parses an SSE body into [event, data] pairs. */
function frames(text: string): Array<[string, Record<string, unknown>]> {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? '{}';
      return [event, JSON.parse(data) as Record<string, unknown>];
    });
}

beforeAll(async () => {
  fake = await startFakeAnthropic();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.behave({ kind: 'ok' });
  fake.requests.length = 0;
});

describe('fake Anthropic server', () => {
  it('rejects a wrong key with Anthropic 401 error body', async () => {
    const res = await post(goodBody, { ...goodHeaders, 'x-api-key': 'nope' });
    expect(res.status).toBe(401);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect(res.headers.get('request-id')).toMatch(/^req_/);
  });

  it('requires anthropic-version and valid bodies', async () => {
    const { 'anthropic-version': _omit, ...noVersion } = goodHeaders;
    expect((await post(goodBody, noVersion)).status).toBe(400);
    expect((await post({ ...goodBody, max_tokens: undefined })).status).toBe(400);
    expect((await post({ ...goodBody, messages: [{ role: 'system', content: 'x' }] })).status).toBe(400);
    expect((await post({ ...goodBody, messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] })).status).toBe(400);
    expect((await post({ ...goodBody, temperature: 1.2 })).status).toBe(400);
    expect((await post({ ...goodBody, messages: [{ role: 'user', content: [{ type: 'text', text: ' \n' }] }] })).status).toBe(400);
    expect((await post({ ...goodBody, temperature: 0.5, top_p: 0.9 })).status).toBe(400);
    expect((await post({ ...goodBody, stop_sequences: ['\n'] })).status).toBe(400);
    expect(fake.requests).toHaveLength(8);
  });

  it('answers a Message with usage', async () => {
    const res = await post(goodBody);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [{ type: 'text', text: FAKE_DEFAULT_TEXT }],
      stop_reason: 'end_turn',
      usage: { ...FAKE_INPUT_USAGE, output_tokens: 6 },
    });
  });

  it('streams the documented event sequence with pings', async () => {
    const res = await post({ ...goodBody, stream: true });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = frames(await res.text());
    const names = events.map(([e]) => e);
    expect(names[0]).toBe('message_start');
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(names).toContain('ping');
    expect(names.filter((n) => n === 'content_block_delta')).toHaveLength(6);
    for (const [event, data] of events) expect(data.type).toBe(event);
  });

  it('cuts a stream after the given number of events', async () => {
    fake.behave({ kind: 'cut_stream', afterEvents: 3 });
    const events = frames(await (await post({ ...goodBody, stream: true })).text());
    expect(events.map(([e]) => e)).toEqual(['message_start', 'content_block_start', 'ping']);
  });

  it('closes even while a request hangs', async () => {
    const other = await startFakeAnthropic();
    other.behave({ kind: 'hang' });
    const pending = fetch(`${other.url}/messages`, { method: 'POST', headers: goodHeaders, body: JSON.stringify(goodBody) }).catch((err: unknown) => err);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await other.close();
    expect(await pending).toBeInstanceOf(Error);
  });
});
