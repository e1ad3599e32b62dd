import { describe, expect, it } from 'vitest';
import { listPageOf } from './list-query.js';

describe('listPageOf', () => {
  it('takes after, limit and order, with OpenAI\'s defaults', () => {
    expect(listPageOf({})).toEqual({ limit: 20, order: 'desc' });
    expect(listPageOf({ after: 'file-0123456789abcdef01234567', limit: '5', order: 'asc' })).toEqual({ limit: 5, order: 'asc', after: 'file-0123456789abcdef01234567' });
  });

  it('refuses an after that no id can be, a control character included, naming the field (never a fault of the store)', () => {
    for (const after of ['\u0000', 'file-\u0000', 'video_\n', ['a', 'b']]) {
      expect(() => listPageOf({ after })).toThrow(expect.objectContaining({ code: 'invalid_parameter', param: 'after' }));
    }
  });
});
