/**
 * `tollgate serve` refusing to start, in this process: what it prints and its exit status. (The
 * real command, serving, is test/cli/serve.test.ts.)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { main } from './main.js';

const root = mkdtempSync(join(tmpdir(), 'tollgate-serve-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

let n = 0;
function configFile(extra: string, blobs = join(root, `blobs-${++n}`)): string {
  const file = join(root, `tollgate-${++n}.yaml`);
  writeFileSync(
    file,
    `storage: { url: "sqlite://${join(root, `gw-${n}.db`)}", spill_directory: "${join(root, `spill-${n}`)}" }
blobs: { directory: "${blobs}" }
log: { level: silent }
providers: [{ id: mock, kind: mock }]
models: [{ id: m, capabilities: [chat], context_window: 4096, routes: [{ provider: mock, model: m }] }]
tiers: { basic: {} }
${extra}
`,
  );
  return file;
}

/** The exit status of `tollgate ...args` and what it wrote on standard error. */
async function run(...args: string[]): Promise<{ code: number; stderr: string }> {
  const errors: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((text: unknown) => void errors.push(String(text)));
  vi.spyOn(console, 'log').mockImplementation(() => undefined);
  const code = await main(args);
  return { code, stderr: errors.join('\n') };
}

describe('tollgate serve, refusing to start', () => {
  it('stops at start, naming blobs.directory, when the blob directory cannot be made', async () => {
    const blocker = join(root, 'a-file');
    writeFileSync(blocker, 'not a directory');
    const blobs = join(blocker, 'blobs');
    const { code, stderr } = await run('serve', '--config', configFile('', blobs), '--port', '0');
    expect(code).toBe(1);
    expect(stderr).toContain(`tollgate: cannot start: blobs.directory "${blobs}" cannot be used: it must be a directory this process can create and write (ENOTDIR`);
  });

  it('reports a YAML alias inside its own anchor as a configuration error (exit status 2)', async () => {
    const file = configFile('accounts: &a [*a]');
    const { code, stderr } = await run('serve', '--config', file);
    expect(code).toBe(2);
    expect(stderr).toBe(`tollgate: configuration error in ${file}: accounts[0]: contains itself (a YAML alias inside its own anchor)`);
  });

  it('refuses an empty --host, which would listen on every interface (exit status 2)', async () => {
    const { code, stderr } = await run('serve', '--config', configFile(''), '--host', '', '--port', '0');
    expect(code).toBe(2);
    expect(stderr).toContain('tollgate: --host must be an address such as 127.0.0.1 or 0.0.0.0 (got "")');
  });
});
