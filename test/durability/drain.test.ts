/**
 * SIGTERM drains the real `tollgate serve` process: no new connection is taken, every request in
 * flight (streams included) is answered in full and charged, and the process exits 0. With a
 * deadline shorter than the requests, those still running are cut at the deadline, charged no
 * more than they delivered, and the process still exits 0, on time.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key.js';
import { openStore } from '../../src/storage/open-store.js';
import { serveCli, type Served } from '../support/spawn-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-drain-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let served: Served | undefined;
afterEach(() => {
  if (served?.child.exitCode === null && served.child.signalCode === null) served.child.kill('SIGKILL');
  served = undefined;
});

/** Micro-credits per token (1000 and 2000 credits per million tokens). */
const INPUT_MICROS = 1000;
const OUTPUT_MICROS = 2000;

function configFor(db: string, key: string, options: { shutdownMs: number; latencyMs: number; chunkDelayMs: number }): string {
  return `
server: { shutdown_timeout_ms: ${options.shutdownMs} }
storage: { url: "sqlite://${db}", spill_directory: "${dirname(db)}/spill" }
blobs: { directory: "${dirname(db)}/blobs" }
log: { level: info, requests: false }
providers:
  - { id: slow, kind: mock, mock: { latency_ms: ${options.latencyMs} } }
  - { id: trickle, kind: mock, mock: { chunk_delay_ms: ${options.chunkDelayMs} } }
models:
  - id: slow
    capabilities: [chat]
    context_window: 8192
    max_output_tokens: 64
    price: { input_per_million_tokens: 1000, output_per_million_tokens: 2000 }
    routes: [{ provider: slow, model: m }]
  - id: stream
    capabilities: [chat, streaming]
    context_window: 8192
    max_output_tokens: 64
    price: { input_per_million_tokens: 1000, output_per_million_tokens: 2000 }
    routes: [{ provider: trickle, model: m }]
tiers: { standard: {} }
accounts:
  - id: acct
    tier: standard
    credits: 1000000
    keys: [{ key: "${key}" }]
`;
}

async function start(name: string, options: { shutdownMs: number; latencyMs: number; chunkDelayMs: number }): Promise<{ served: Served; key: string; db: string; exited: Promise<{ code: number | null; at: number }> }> {
  const { key } = generateApiKey();
  const db = join(dir, `${name}.db`);
  const config = join(dir, `${name}.yaml`);
  writeFileSync(config, configFor(db, key, options));
  const running = await serveCli(['--config', config, '--port', '0']);
  served = running;
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => running.child.once('exit', (code) => resolve({ code, at: Date.now() })));
  return { served: running, key, db, exited };
}

const PROMPT = 'please say something long enough for a slow stream to still be running';

function post(url: string, key: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: PROMPT }], ...body }),
  });
}

interface StreamRead {
  requestId: string;
  status: number;
  text: string;
  /** Frames with a completion chunk (every `data:` event but [DONE]). */
  frames: number;
  /** Whether the connection failed before the end. */
  cut: boolean;
}

/** Starts a stream and resolves once its first frame arrived, with the rest of it to come. */
async function openStream(url: string, key: string, maxTokens: number): Promise<{ requestId: string; rest: Promise<StreamRead> }> {
  const res = await post(url, key, { model: 'stream', stream: true, max_tokens: maxTokens });
  const requestId = res.headers.get('x-request-id') as string;
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const readOne = async (): Promise<boolean> => {
    const { done, value } = await reader.read();
    if (!done) text += decoder.decode(value, { stream: true });
    return done;
  };
  while (!text.includes('\n\n')) if (await readOne()) break;
  const rest = (async (): Promise<StreamRead> => {
    let cut = false;
    try {
      while (!(await readOne()));
    } catch {
      cut = true;
    }
    const frames = text.split('\n\n').filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]').length;
    return { requestId, status: res.status, text, frames, cut };
  })();
  return { requestId, rest };
}

/** Until a new connection is refused: the listener is closed. */
async function refusedWithin(url: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      await (await fetch(`${url}/healthz`)).text();
    } catch {
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

interface UsageRow {
  request_id: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number;
  status: number;
}

function usageRows(db: string): Map<string, UsageRow> {
  const sqlite = new Database(db, { readonly: true });
  try {
    const rows = sqlite.prepare('select request_id, prompt_tokens, completion_tokens, cost_micros, status from usage_records').all() as UsageRow[];
    return new Map(rows.map((r) => [r.request_id, r]));
  } finally {
    sqlite.close();
  }
}

async function chargesOf(db: string): Promise<Map<string, number>> {
  const store = await openStore(`sqlite://${db}`);
  try {
    expect((await store.getAccount('acct'))?.balanceMicros).toBe(await store.ledgerSum('acct'));
    const charges = (await store.listLedger('acct', 10_000)).filter((e) => e.kind === 'charge');
    return new Map(charges.map((e) => [e.requestId as string, -e.amountMicros]));
  } finally {
    await store.close();
  }
}

function logLines(output: string): Array<{ msg: string; [field: string]: unknown }> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string });
}

describe('SIGTERM drain of tollgate serve', () => {
  it('finishes every request in flight, streams included, refuses new connections, charges them all and exits 0', { timeout: 60_000 }, async () => {
    const { served: running, key, db, exited } = await start('complete', { shutdownMs: 20_000, latencyMs: 1500, chunkDelayMs: 150 });
    const streams = await Promise.all([openStream(running.url, key, 10), openStream(running.url, key, 10), openStream(running.url, key, 10)]);
    const slow = [0, 1, 2].map(() => post(running.url, key, { model: 'slow', max_tokens: 5 }));
    await new Promise((resolve) => setTimeout(resolve, 300));

    running.child.kill('SIGTERM');
    expect(await refusedWithin(running.url, 2000)).toBe(true);

    const answers = await Promise.all(slow);
    const jsonIds: string[] = [];
    for (const res of answers) {
      expect(res.status).toBe(200);
      const body = (await res.json()) as { object: string; usage: { completion_tokens: number } };
      expect(body.object).toBe('chat.completion');
      jsonIds.push(res.headers.get('x-request-id') as string);
    }
    const reads = await Promise.all(streams.map((s) => s.rest));
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(read.cut).toBe(false);
      expect(read.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    }
    expect((await exited).code).toBe(0);

    const lines = logLines(running.output());
    expect(lines.find((l) => l.msg.startsWith('draining'))).toMatchObject({ in_flight: 6, timeout_ms: 20_000 });
    expect(lines.find((l) => l.msg.startsWith('drained'))).toMatchObject({ cut: 0 });

    const charges = await chargesOf(db);
    const usage = usageRows(db);
    for (const id of [...jsonIds, ...reads.map((r) => r.requestId)]) {
      const row = usage.get(id);
      expect(row, `usage of ${id}`).toBeDefined();
      expect(row!.status).toBe(200);
      expect(row!.cost_micros).toBe(row!.prompt_tokens * INPUT_MICROS + row!.completion_tokens * OUTPUT_MICROS);
      expect(charges.get(id), `charge of ${id}`).toBe(row!.cost_micros);
    }
    expect(charges.size).toBe(6);
    expect(usage.size).toBe(6);
  });

  it('ends what is still running at server.shutdown_timeout_ms (streams with an error frame), charges it no more than it delivered, and exits 0 on time', { timeout: 60_000 }, async () => {
    const shutdownMs = 800;
    const { served: running, key, db, exited } = await start('deadline', { shutdownMs, latencyMs: 10_000, chunkDelayMs: 200 });
    const streams = await Promise.all([openStream(running.url, key, 40), openStream(running.url, key, 40)]);
    const slow = [0, 1].map(() => post(running.url, key, { model: 'slow', max_tokens: 5 }).then((r) => r.status, () => 'cut' as const));
    await new Promise((resolve) => setTimeout(resolve, 300));

    const signalled = Date.now();
    running.child.kill('SIGTERM');
    const { code, at } = await exited;
    expect(code).toBe(0);
    // The deadline, the streams' error frames, the flush of billing and the process's exit
    // (about 90 ms here): nothing left over may keep the process alive (a timer once held it 2 s).
    expect(at - signalled).toBeLessThan(shutdownMs + 1200);
    expect(at - signalled).toBeGreaterThanOrEqual(shutdownMs - 50);

    expect(await Promise.all(slow)).toEqual(['cut', 'cut']);
    const reads = await Promise.all(streams.map((s) => s.rest));
    for (const read of reads) {
      // Ended in the stream, as the specification has errors after a stream started, not cut without a word.
      expect(read.cut).toBe(false);
      expect(read.text).toContain('"code":"shutting_down"');
      expect(read.text).not.toContain('[DONE]');
      expect(read.frames).toBeGreaterThan(1);
    }
    const lines = logLines(running.output());
    expect(lines.find((l) => l.msg.startsWith('draining'))).toMatchObject({ in_flight: 4 });
    expect(lines.find((l) => l.msg.startsWith('drain deadline passed'))).toMatchObject({ cut: 4 });

    const charges = await chargesOf(db);
    const usage = usageRows(db);
    for (const read of reads) {
      const row = usage.get(read.requestId);
      expect(row, `usage of ${read.requestId}`).toBeDefined();
      // Every completion token charged reached the client (the mock sends one a frame).
      expect(row!.completion_tokens).toBeGreaterThan(0);
      expect(row!.completion_tokens).toBeLessThanOrEqual(read.frames);
      expect(row!.cost_micros).toBe(row!.prompt_tokens * INPUT_MICROS + row!.completion_tokens * OUTPUT_MICROS);
      expect(charges.get(read.requestId)).toBe(row!.cost_micros);
    }
    // The two answers never sent are not charged at all.
    expect(charges.size).toBe(2);
    expect([...usage.values()].filter((r) => r.cost_micros === 0)).toHaveLength(2);
  });
});
