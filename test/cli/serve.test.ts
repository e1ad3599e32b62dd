/**
 * The user steps of the quick start, on the real command: the embedded default with a demo key,
 * PORT and --port, a configuration file, and start-up stopping on a bad configuration.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { runCli, serveCli } from '../support/spawn-cli.js';
import { generateApiKey } from '../../src/auth/api-key.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('tollgate serve', () => {
  it('runs the embedded default: SQLite under ./data, a demo key printed once, PORT honoured', async () => {
    const cwd = tempDir();
    const first = await serveCli([], { cwd, env: { PORT: '0' } });
    try {
      const key = /Demo API key \(shown once, stored only as a hash\): (sk-tg-\S+)/.exec(first.output())?.[1];
      expect(key).toBeDefined();
      expect(existsSync(join(cwd, 'data', 'tollgate.db'))).toBe(true);
      const client = new OpenAI({ baseURL: `${first.url}/v1`, apiKey: key!, maxRetries: 0 });
      expect((await client.models.list()).data.map((m) => m.id)).toContain('mock-chat');
      const completion = await client.chat.completions.create({ model: 'mock-chat', messages: [{ role: 'user', content: 'Hello' }] });
      expect(completion.choices[0]?.message.content).toContain('Hello');
      // Every modality has a mock model; generated files land under ./data/blobs.
      const speech = await client.audio.speech.create({ model: 'mock-tts', voice: 'alloy', input: 'Hello', response_format: 'wav' });
      expect(Buffer.from(await speech.arrayBuffer()).subarray(0, 4).toString('latin1')).toBe('RIFF');
      const image = await client.images.generate({ model: 'mock-image', prompt: 'a dot', size: '16x16' });
      expect((await fetch(image.data![0]!.url!, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      expect(existsSync(join(cwd, 'data', 'blobs'))).toBe(true);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const second = await serveCli(['--port', '0'], { cwd });
    try {
      expect(second.output()).not.toMatch(/sk-tg-/);
      expect(second.output()).toContain('printed when this data directory was first used');
      // A second process on the same database (an overlapping restart) would spend the same balances.
      const overlapping = await runCli(['serve', '--port', '0'], { cwd });
      expect(overlapping.code).toBe(1);
      expect(overlapping.stderr).toMatch(/cannot start: storage\.url: another Tollgate process is using .*tollgate\.db/);
    } finally {
      await second.stop();
    }
  });

  it('serves a configuration file with --port and --host', async () => {
    const cwd = tempDir();
    const { key } = generateApiKey();
    writeFileSync(
      join(cwd, 'tollgate.yaml'),
      `storage: { url: "sqlite://./gw.db" }
log: { level: warn }
providers: [{ id: mock, kind: mock }]
models:
  - { id: team-model, capabilities: [chat, streaming], context_window: 4096, routes: [{ provider: mock, model: x }] }
tiers: { basic: { models: ["*"] } }
accounts:
  - id: team
    tier: basic
    keys: [{ key: "\${TEAM_KEY}" }]
`,
    );
    const served = await serveCli(['--config', 'tollgate.yaml', '--port', '0', '--host', '127.0.0.1'], { cwd, env: { TEAM_KEY: key } });
    try {
      expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(served.output()).not.toContain(key);
      const client = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: key, maxRetries: 0 });
      const stream = await client.chat.completions.create({ model: 'team-model', messages: [{ role: 'user', content: 'Hi' }], stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(text).toBe('This is a mock reply to: Hi');
    } finally {
      await served.stop();
    }
  });

  it('stops on a bad configuration with one message naming the file and the field', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'bad.yaml'), 'providers: [{ id: p, kind: opnai }]\nmodels: []\ntiers: {}\n');
    const result = await runCli(['serve', '--config', 'bad.yaml'], { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe('tollgate: configuration error in bad.yaml: providers[0].kind: must be one of openai, anthropic, gemini, mock (got "opnai")');
    expect(result.stdout).not.toContain('listening');
    expect(existsSync(join(cwd, 'data'))).toBe(false);
  });

  it('stops when the configuration file cannot be read', async () => {
    const result = await runCli(['serve', '--config', 'nope.yaml'], { cwd: tempDir() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('nope.yaml: cannot read the file (ENOENT)');
  });

  it('rejects a bad port and unknown options with usage errors', async () => {
    const badPort = await runCli(['serve', '--port', 'eighty'], { cwd: tempDir() });
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain('--port must be a port number');
    const unknown = await runCli(['serve', '--colour'], { cwd: tempDir() });
    expect(unknown.code).toBe(2);
  });

  it('generates keys', async () => {
    const result = await runCli(['keys', 'generate']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^sk-tg-[A-Za-z0-9]{12}-[A-Za-z0-9]{40}$/);
  });
});
