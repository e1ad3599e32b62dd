import { describe, expect, it } from 'vitest';
import { adminTokenCheck } from './admin-token.js';

const check = adminTokenCheck('s3cret token');
const codeOf = (authorization: string | undefined): string | undefined => {
  try {
    check(authorization);
    return undefined;
  } catch (err) {
    return (err as { code: string }).code;
  }
};

describe('adminTokenCheck', () => {
  it('takes the token after "Bearer ", trimmed, and refuses every other header with 401 invalid_admin_token', () => {
    expect(codeOf('Bearer s3cret token')).toBeUndefined();
    expect(codeOf('bearer   s3cret token  ')).toBeUndefined();
    for (const header of [undefined, '', 'Bearer', 'Bearer   ', 'Basic s3cret token', 'Bearer s3cret', 'Bearers3cret token']) {
      expect(codeOf(header)).toBe('invalid_admin_token');
    }
  });

  it('keeps inner spaces in the token: a long run of them is a wrong token, not a trimmed right one', () => {
    expect(codeOf(`Bearer s3cret${' '.repeat(16_000)}token`)).toBe('invalid_admin_token');
    expect(codeOf(`Bearer ${' '.repeat(16_000)}s3cret token${' '.repeat(16_000)}`)).toBeUndefined();
  });
});
