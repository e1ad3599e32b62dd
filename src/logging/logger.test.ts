import { afterEach, describe, expect, it, vi } from 'vitest';
import { PassThrough } from 'node:stream';
import { AccessLogWriter, createLogger, type AccessRecord } from './logger.js';
import { keepProviderSecrets } from '../errors/index.js';

const record: AccessRecord = {
  requestId: 'req_1', clientRequestId: undefined, method: 'GET', path: '/v1/models', status: 200, ms: 1.5,
  keyId: 'AbCdEfGhIjKl', account: 'acct', sdk: 'curl', model: undefined, provider: undefined, upstreamModel: undefined,
  promptTokens: undefined, completionTokens: undefined, errorCode: undefined, streamEnd: undefined,
};

afterEach(() => vi.useRealTimers());

describe('AccessLogWriter', () => {
  it('holds lines briefly, then writes them within a second even when traffic is quiet', () => {
    vi.useFakeTimers();
    const out = new PassThrough();
    const written: string[] = [];
    out.on('data', (c: Buffer) => written.push(c.toString()));
    const writer = new AccessLogWriter(out);
    writer.write(record);
    expect(written.join('')).toBe('');
    vi.advanceTimersByTime(1000);
    const line = JSON.parse(written.join('')) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 30, request_id: 'req_1', path: '/v1/models', status: 200, key_id: 'AbCdEfGhIjKl', msg: 'request' });
    expect(line).not.toHaveProperty('model');
    writer.close();
  });

  it('writes at once when 16 KiB are pending', () => {
    const out = new PassThrough();
    const writer = new AccessLogWriter(out);
    for (let i = 0; i < 100; i++) writer.write(record);
    expect(out.readableLength).toBeGreaterThan(16 * 1024);
    writer.close();
  });
});

describe('createLogger', () => {
  it('scrubs provider secrets from a logged error, an Error or a plain message, and logs other values as they are', () => {
    keepProviderSecrets('sk-logged-provider-secret');
    const out = new PassThrough();
    const lines: string[] = [];
    out.on('data', (c: Buffer) => lines.push(...c.toString().trim().split('\n')));
    const logger = createLogger('info', out);
    logger.error({ err: new Error('upstream said sk-logged-provider-secret') }, 'an Error');
    logger.warn({ err: 'Reached the max retries, key sk-logged-provider-secret' }, 'a message string');
    logger.warn({ err: 42 }, 'something else');
    const [error, text, other] = lines.map((l) => JSON.parse(l) as { err: unknown });
    expect(error?.err).toMatchObject({ type: 'Error', message: 'upstream said [redacted]' });
    expect(JSON.stringify(error)).not.toContain('sk-logged-provider-secret');
    expect(text?.err).toBe('Reached the max retries, key [redacted]');
    expect(other?.err).toBe(42);
  });
});
