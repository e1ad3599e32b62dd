/** The catalogue is the source of truth; the README's error table must list every code exactly. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, GatewayError, STATUS_TABLE, errorHeaders, toEnvelope, toGatewayError, type ErrorCode } from './index.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('error catalogue', () => {
  it.each(Object.keys(ERROR_CODES) as ErrorCode[])('documents %s in the README with its status and type', (code) => {
    const { status } = ERROR_CODES[code];
    const row = readme.split('\n').find((line) => line.includes(`| \`${code}\` |`));
    expect(row, `README has no row for ${code}`).toBeDefined();
    expect(row).toContain(`| ${status} | \`${STATUS_TABLE[status].type}\` |`);
  });

  it('has no README row for a code the gateway does not emit', () => {
    const documented = [...readme.matchAll(/^\| \d{3} \| `[a-z_]+` \| `([a-z_]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it('builds the envelope with the type of the spec table', () => {
    const err = new GatewayError('invalid_parameter', 'temperature must be at most 2', { param: 'temperature' });
    expect(toEnvelope(err)).toEqual({ error: { message: 'temperature must be at most 2', type: 'invalid_request_error', param: 'temperature', code: 'invalid_parameter' } });
  });

  it('turns anything else into a 500 without its detail', () => {
    const err = toGatewayError(new Error('secret detail'));
    expect(err.status).toBe(500);
    expect(err.message).not.toContain('secret');
  });

  it('sends retry hints following the spec lists', () => {
    expect(errorHeaders(new GatewayError('upstream_unavailable', undefined, { retryAfterSeconds: 2.2 }))).toMatchObject({ 'x-should-retry': 'true', 'retry-after': '3', 'retry-after-ms': '3000' });
    expect(errorHeaders(new GatewayError('invalid_api_key'))['x-should-retry']).toBe('false');
    for (const status of [429, 500, 502, 503, 504] as const) expect(STATUS_TABLE[status].retryable).toBe(true);
    for (const status of [400, 401, 402, 403, 404, 409] as const) expect(STATUS_TABLE[status].retryable).toBe(false);
  });
});
