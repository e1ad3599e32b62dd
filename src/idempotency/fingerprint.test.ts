import { describe, expect, it } from 'vitest';
import { canonicalJson, idempotencyRecordId, requestFingerprint } from './fingerprint.js';

describe('request fingerprint', () => {
  it('ignores key order and white space at every depth', () => {
    const a = JSON.parse('{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0.5}');
    const b = JSON.parse('{ "temperature": 0.5,\n "messages": [ { "content": "hi", "role": "user" } ], "model": "m" }');
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(requestFingerprint('POST', '/v1/chat/completions', a)).toBe(requestFingerprint('post', '/v1/chat/completions', b));
  });

  it('tells apart every value, array order, method and path', () => {
    const base = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    const fp = requestFingerprint('POST', '/v1/chat/completions', base);
    expect(requestFingerprint('POST', '/v1/chat/completions', { ...base, model: 'n' })).not.toBe(fp);
    expect(requestFingerprint('POST', '/v1/chat/completions', { ...base, temperature: 0 })).not.toBe(fp);
    expect(requestFingerprint('POST', '/v1/embeddings', base)).not.toBe(fp);
    expect(requestFingerprint('PUT', '/v1/chat/completions', base)).not.toBe(fp);
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
    expect(canonicalJson({ a: '1' })).not.toBe(canonicalJson({ a: 1 }));
  });

  it('writes canonical JSON that parses back to the same value', () => {
    const value = { z: [null, true, 1.5, 'x"y'], a: { c: {}, b: [] } };
    expect(canonicalJson(value)).toBe('{"a":{"b":[],"c":{}},"z":[null,true,1.5,"x\\"y"]}');
    expect(JSON.parse(canonicalJson(value))).toEqual(value);
  });

  it('scopes a key to its account', () => {
    expect(idempotencyRecordId('acct-a', 'k1')).not.toBe(idempotencyRecordId('acct-b', 'k1'));
    expect(idempotencyRecordId('acct-a', 'k1')).toMatch(/^[0-9a-f]{64}$/);
  });
});
