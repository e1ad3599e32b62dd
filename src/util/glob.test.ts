import { describe, expect, it } from 'vitest';
import { GlobList } from './glob.js';

describe('GlobList', () => {
  it('matches exact names, * and ?, and nothing else', () => {
    const list = new GlobList(['gpt-4o', 'claude-*', 'llama-?b', 'a.b']);
    expect(list.matches('gpt-4o')).toBe(true);
    expect(list.matches('gpt-4o-mini')).toBe(false);
    expect(list.matches('claude-sonnet-4')).toBe(true);
    expect(list.matches('llama-8b')).toBe(true);
    expect(list.matches('llama-70b')).toBe(false);
    expect(list.matches('aXb')).toBe(false);
    expect(new GlobList(['*']).matches('anything/at all')).toBe(true);
    expect(new GlobList([]).matches('x')).toBe(false);
  });
});
