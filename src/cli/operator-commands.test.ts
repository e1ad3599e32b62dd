/**
 * Mistakes on the command line of the operator commands, in this process: exit status 2 and no
 * request sent, where a gateway would refuse the request (exit status 1). The commands against a
 * real gateway are test/cli/admin-cli.test.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from './main.js';

/** Stands in for a gateway that refuses every request, as it refuses these mistakes. */
let server: Server;
const requests: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'refused', type: 'invalid_request_error', code: 'invalid_parameter', param: null } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  vi.restoreAllMocks();
  requests.length = 0;
});

/** The exit status of `tollgate ...args` and what it wrote on standard error. */
async function run(...args: string[]): Promise<{ code: number; stderr: string }> {
  const errors: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((text: unknown) => void errors.push(String(text)));
  vi.spyOn(console, 'log').mockImplementation(() => undefined);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const code = await main([...args, '--url', url, '--token', 'an-admin-token-for-the-test']);
  return { code, stderr: errors.join('\n') };
}

describe('operator commands: mistakes on the command line', () => {
  it.each([['1001'], ['5000'], ['999999999']])('accounts ledger --limit %s, above the 1000 a page holds, exits 2 without asking the gateway', async (limit) => {
    const { code, stderr } = await run('accounts', 'ledger', 'acct', '--limit', limit);
    expect(code).toBe(2);
    expect(stderr).toContain(`tollgate: --limit must be a whole number of entries from 1 to 1000, such as 50 (got "${limit}")`);
    expect(requests).toEqual([]);
  });

  it('accounts ledger --limit 1000 is asked of the gateway', async () => {
    expect((await run('accounts', 'ledger', 'acct', '--limit', '1000')).code).toBe(1);
    expect(requests).toEqual(['GET /admin/v1/accounts/acct/ledger?limit=1000']);
  });

  it.each([
    ['set-scope', 'AAAAAAAAAAAA', '--models', ''],
    ['set-scope', 'AAAAAAAAAAAA', '--models', ' , '],
    ['create', 'acct', '--models', ''],
    ['create', 'acct', '--models', 'gpt-*', '--sdks', ''],
    ['set-scope', 'AAAAAAAAAAAA', '--endpoints', ','],
  ])('keys %s %s %s %j, an empty list that would refuse every request, exits 2 without asking the gateway', async (...args) => {
    const { code, stderr } = await run('keys', ...args);
    const option = args.findLast((a) => a.startsWith('--'))!;
    expect(code).toBe(2);
    expect(stderr).toContain(`tollgate: ${option} needs at least one name or glob`);
    expect(requests).toEqual([]);
  });
});
