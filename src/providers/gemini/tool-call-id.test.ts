import { describe, it, expect } from 'vitest';
import { thoughtSignatureOf, toolCallId } from './tool-call-id.js';

describe('tool call ids', () => {
  it('are unique call_ ids when there is no signature', () => {
    const a = toolCallId();
    expect(a).toMatch(/^call_[0-9a-f]{24}$/);
    expect(toolCallId('')).toMatch(/^call_[0-9a-f]{24}$/);
    expect(toolCallId()).not.toBe(a);
    expect(thoughtSignatureOf(a)).toBeUndefined();
  });

  it('carry a signature in id-safe characters and give it back exactly', () => {
    const signature = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 37 + 250) % 256)).toString('base64');
    expect(signature).toMatch(/[+/]/);
    const id = toolCallId(signature);
    expect(id).toMatch(/^call_[0-9a-f]{24}_ts_[A-Za-z0-9_-]+$/);
    expect(thoughtSignatureOf(id)).toBe(signature);
  });

  it('find no signature in ids made elsewhere', () => {
    for (const id of ['call_abc', 'toolu_01ABC', 'call_0123456789abcdef01234567_ts_', 'x_call_0123456789abcdef01234567_ts_AAAA']) {
      expect(thoughtSignatureOf(id)).toBeUndefined();
    }
  });
});
