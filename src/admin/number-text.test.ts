import { describe, expect, it } from 'vitest';
import { memberText } from './number-text.js';

describe('memberText', () => {
  it('gives a number member as written, not as the double JSON.parse makes of it', () => {
    expect(memberText('{"credits": 1.0000000000000001}', 'credits')).toBe('1.0000000000000001');
    expect(memberText('{"credits":-2.50E+3,"note":null}', 'credits')).toBe('-2.50E+3');
  });

  it('is not misled by numbers and quotes inside strings, nor by nested members of the same name', () => {
    const body = String.raw`{"note": "\"credits\": 1.0000000000000001 \\", "x": {"credits": 7.1234567}, "credits": 3, "tail": [1.5, "2"]}`;
    expect(JSON.parse(body)).toMatchObject({ credits: 3, x: { credits: 7.1234567 } });
    expect(memberText(body, 'credits')).toBe('3');
    expect(memberText(body, 'note')).toBe('"credits": 1.0000000000000001 \\');
  });

  it('takes the last of repeated members, as JSON.parse does', () => {
    expect(memberText('{"credits": 1.00000001, "credits": 2}', 'credits')).toBe('2');
  });

  it('gives nothing for a member that is absent or not a number, or a body that is not an object', () => {
    expect(memberText('{"note": "x"}', 'credits')).toBeUndefined();
    expect(memberText('{"credits": null}', 'credits')).toBeUndefined();
    expect(memberText('{"credits": [1]}', 'credits')).toBeUndefined();
    expect(memberText('[1]', 'credits')).toBeUndefined();
    expect(memberText('{}', 'toString')).toBeUndefined();
  });
});
