import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { parseConfigText } from '../config/load.js';
import { openLimiter } from './open-limiter.js';
import { MemoryLimiter } from './memory-limiter.js';

const configWith = (storage: string): ReturnType<typeof parseConfigText> =>
  parseConfigText(
    `
storage: { url: "${storage}" }
providers: [{ id: mock, kind: mock }]
models:
  - { id: m, capabilities: [chat], context_window: 4096, routes: [{ provider: mock, model: m }] }
tiers:
  free: { models: ["*"] }
`,
    'tollgate.yaml',
    {},
  );

/** The messages of the warnings logged while `run` runs. */
async function warningsOf(run: (logger: pino.Logger) => Promise<unknown>): Promise<string[]> {
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
  await run(logger);
  return lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
}

describe('openLimiter', () => {
  it('warns that limits are per instance when the store is shared but the limits are counted in memory', async () => {
    const warnings = await warningsOf(async (logger) => {
      const opened = await openLimiter(configWith('postgres://127.0.0.1:5432/test'), logger);
      expect(opened.limiter).toBeInstanceOf(MemoryLimiter);
      await opened.close();
    });
    expect(warnings).toEqual([expect.stringContaining('limits.backend is memory')]);
  });

  it('says nothing on the embedded SQLite store, where one instance runs', async () => {
    const warnings = await warningsOf(async (logger) => {
      const opened = await openLimiter(configWith('sqlite://:memory:'), logger);
      await opened.close();
    });
    expect(warnings).toEqual([]);
  });
});
