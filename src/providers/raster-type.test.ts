import { describe, expect, it } from 'vitest';
import { rasterTypeOf } from './raster-type.js';

describe('rasterTypeOf', () => {
  it.each([
    [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0], 'image/png'],
    [[0xff, 0xd8, 0xff, 0xe0], 'image/jpeg'],
    [[...Buffer.from('GIF89a')], 'image/gif'],
    [[...Buffer.from('RIFF'), 0, 0, 0, 0, ...Buffer.from('WEBPVP8 ')], 'image/webp'],
    [[...Buffer.from('<svg xmlns=')], undefined],
    [[...Buffer.from('<!doctype html>')], undefined],
    [[0x89, 0x50], undefined],
  ])('reads %j as %s', (bytes, type) => {
    expect(rasterTypeOf(Uint8Array.from(bytes))).toBe(type);
  });
});
