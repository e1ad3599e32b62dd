import { describe, expect, it } from 'vitest';
import { toEnvelope } from './envelope.js';
import { GatewayError } from './gateway-error.js';
import { keepProviderSecrets, scrubSecrets } from './secrets.js';
import { upstreamStatusError } from '../providers/upstream/upstream-faults.js';

describe('provider secrets', () => {
  it('scrubs a kept key and credential headers from every error envelope, message and param', () => {
    keepProviderSecrets('sk-provider-0123456789', { 'api-key': 'azure-secret-value-42', Authorization: 'Bearer tok-abcdefgh1234', 'Content-Type': 'application/json' });
    const envelope = toEnvelope(new GatewayError('upstream_error', 'echoed sk-provider-0123456789 and azure-secret-value-42 and tok-abcdefgh1234', { param: 'header:sk-provider-0123456789' }));
    expect(envelope.error.message).toBe('echoed [redacted] and [redacted] and [redacted]');
    expect(envelope.error.param).toBe('header:[redacted]');
    // A header that is a setting, not a credential, is left alone: messages may name it.
    expect(scrubSecrets('send application/json')).toBe('send application/json');
  });

  it('keeps nothing too short to be a secret, nor settings named like credentials (they would mangle ordinary words)', () => {
    keepProviderSecrets('lm-studio', { 'X-Auth-Mode': 'passthrough-for-all-callers' });
    expect(scrubSecrets('model lm-studio/qwen in passthrough-for-all-callers mode')).toBe('model lm-studio/qwen in passthrough-for-all-callers mode');
  });

  it('scrubs a secret that contains another whole', () => {
    keepProviderSecrets('inner-secret-0123456', { 'x-api-key': 'outer-inner-secret-0123456-tail' });
    expect(scrubSecrets('echo outer-inner-secret-0123456-tail')).toBe('echo [redacted]');
  });

  it('scrubs an upstream message before cutting it, so that no part of a secret is left at the cut', () => {
    const key = 'sk-ant-api03-' + 'A'.repeat(90);
    keepProviderSecrets(key);
    const err = upstreamStatusError('claude', 400, `${'x'.repeat(470)} key: ${key}`);
    expect(toEnvelope(err).error.message).not.toContain('sk-ant-api03');
  });
});

describe('scrubSecrets and Tollgate keys', () => {
  it('cuts every whole Tollgate key in a text to its public id, and leaves ids and other text alone', () => {
    const key = `sk-tg-AbCdEf123456-${'x'.repeat(40)}`;
    expect(scrubSecrets(`No route GET /admin/v1/key/${key} (nor ${key}).`)).toBe('No route GET /admin/v1/key/sk-tg-AbCdEf123456-… (nor sk-tg-AbCdEf123456-…).');
    expect(scrubSecrets('sk-tg-AbCdEf123456 and sk-tg-short-secret')).toBe('sk-tg-AbCdEf123456 and sk-tg-short-secret');
    // A message that cut the key short before it was scrubbed shows none of the secret either.
    expect(scrubSecrets(`No file has the id "file-x${key.slice(0, 50)}".`)).toBe('No file has the id "file-xsk-tg-AbCdEf123456-…".');
  });
});
