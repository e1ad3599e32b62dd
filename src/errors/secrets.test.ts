import { describe, expect, it } from 'vitest';
import { toEnvelope } from './envelope.js';
import { GatewayError } from './gateway-error.js';
import { keepProviderSecrets, scrubSecrets } from './secrets.js';

describe('provider secrets', () => {
  it('scrubs a kept key and credential headers from every error envelope, message and param', () => {
    keepProviderSecrets('sk-provider-0123456789', { 'api-key': 'azure-secret-value-42', Authorization: 'Bearer tok-abcdefgh1234', 'Content-Type': 'application/json' });
    const envelope = toEnvelope(new GatewayError('upstream_error', 'echoed sk-provider-0123456789 and azure-secret-value-42 and tok-abcdefgh1234', { param: 'header:sk-provider-0123456789' }));
    expect(envelope.error.message).toBe('echoed [redacted] and [redacted] and [redacted]');
    expect(envelope.error.param).toBe('header:[redacted]');
    // A header that is a setting, not a credential, is left alone: messages may name it.
    expect(scrubSecrets('send application/json')).toBe('send application/json');
  });

  it('keeps nothing too short to be a secret (it would mangle ordinary words)', () => {
    keepProviderSecrets('short');
    expect(scrubSecrets('a short message')).toBe('a short message');
  });
});
