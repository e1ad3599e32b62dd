import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/index.js';
import { parseIdempotencyKey } from './idempotency-key.js';

function rejection(value: string | string[]): GatewayError {
  try {
    parseIdempotencyKey(value);
  } catch (err) {
    return err as GatewayError;
  }
  throw new Error(`accepted ${JSON.stringify(value)}`);
}

describe('Idempotency-Key header', () => {
  it('is absent without the header', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
  });

  it('takes a bare token, UUIDs and sf-token characters included', () => {
    expect(parseIdempotencyKey('3f2a6c1e-8b7d-4c2a-9f1e-0a1b2c3d4e5f')).toBe('3f2a6c1e-8b7d-4c2a-9f1e-0a1b2c3d4e5f');
    expect(parseIdempotencyKey('order:42/retry*1')).toBe('order:42/retry*1');
  });

  it('takes an RFC 8941 quoted string as the same key as its value, escapes resolved', () => {
    expect(parseIdempotencyKey('"abc"')).toBe('abc');
    expect(parseIdempotencyKey('"with space and \\"quotes\\" and \\\\"')).toBe('with space and "quotes" and \\');
  });

  it('takes 255 characters and refuses 256', () => {
    expect(parseIdempotencyKey('k'.repeat(255))).toHaveLength(255);
    expect(parseIdempotencyKey(`"${'k'.repeat(255)}"`)).toHaveLength(255);
    expect(rejection('k'.repeat(256)).message).toContain('256 characters');
  });

  it.each([
    ['an empty value', ''],
    ['an empty quoted string', '""'],
    ['spaces in a bare token', 'two words'],
    ['an unterminated quote', '"abc'],
    ['a bad escape', '"a\\b"'],
    ['non-ASCII', 'clé'],
    ['two keys', 'a, b'],
    ['a control character', '"a\tb"'],
  ])('refuses %s with a 400 naming the header', (_name, value) => {
    const err = rejection(value);
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_idempotency_key');
    expect(err.param).toBe('Idempotency-Key');
    expect(err.message).toContain('Idempotency-Key');
  });

  it('refuses the header sent twice', () => {
    expect(rejection(['a', 'b']).code).toBe('invalid_idempotency_key');
  });
});
