import { describe, expect, it } from 'vitest';
import { generateApiKey, hashSecret, parseApiKey, secretMatches } from './api-key.js';

describe('API keys', () => {
  it('generates distinct keys of the documented shape, with only a hash to store', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.key).toMatch(/^sk-tg-[A-Za-z0-9]{12}-[A-Za-z0-9]{40}$/);
    expect(a.key).not.toBe(b.key);
    expect(a.secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.secretHash).not.toContain(a.key.slice(-40));
  });

  it('parses its own keys and nothing else', () => {
    const { key, id } = generateApiKey();
    expect(parseApiKey(key)?.id).toBe(id);
    expect(parseApiKey('sk-proj-abc')).toBeNull();
    expect(parseApiKey(`${key}x`)).toBeNull();
  });

  it('matches a secret against its hash only', () => {
    const { key, secretHash } = generateApiKey();
    const secret = parseApiKey(key)!.secret;
    expect(secretMatches(secret, secretHash)).toBe(true);
    expect(secretMatches(secret.replace(/.$/, secret.endsWith('a') ? 'b' : 'a'), secretHash)).toBe(false);
    expect(secretMatches(secret, hashSecret('other'))).toBe(false);
    expect(secretMatches(secret, 'short')).toBe(false);
  });
});
