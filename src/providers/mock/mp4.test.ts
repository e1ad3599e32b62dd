import { describe, expect, it } from 'vitest';
import { tinyMp4 } from './mp4.js';

interface Box {
  type: string;
  /** Offset of the payload in the file. */
  start: number;
  payload: Buffer;
  children: Box[];
}

const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl', 'dinf']);

/** Walks ISO-BMFF boxes the way a player does, insisting that every size adds up exactly. */
function walk(file: Buffer, from = 0, to = file.length): Box[] {
  const boxes: Box[] = [];
  let offset = from;
  while (offset < to) {
    const size = file.readUInt32BE(offset);
    const type = file.toString('latin1', offset + 4, offset + 8);
    expect(size, `size of ${type}`).toBeGreaterThanOrEqual(8);
    expect(offset + size, `end of ${type}`).toBeLessThanOrEqual(to);
    const payload = file.subarray(offset + 8, offset + size);
    boxes.push({ type, start: offset + 8, payload, children: CONTAINERS.has(type) ? walk(file, offset + 8, offset + size) : [] });
    offset += size;
  }
  expect(offset).toBe(to);
  return boxes;
}

function find(boxes: Box[], path: string): Box {
  const [head, ...rest] = path.split('/');
  const box = boxes.find((b) => b.type === head);
  if (!box) throw new Error(`no ${head} box`);
  return rest.length === 0 ? box : find(box.children, rest.join('/'));
}

describe('tinyMp4', () => {
  const seconds = 4;
  const file = tinyMp4(seconds, 720, 1280);
  const boxes = walk(file);

  it('is ftyp isom, then moov before mdat so a player can start before the end', () => {
    expect(boxes.map((b) => b.type)).toEqual(['ftyp', 'moov', 'mdat']);
    const ftyp = find(boxes, 'ftyp').payload;
    expect(ftyp.toString('latin1', 0, 4)).toBe('isom');
    expect(ftyp.toString('latin1', 8)).toContain('avc1');
  });

  it('has the duration in mvhd, the size in tkhd and a video handler', () => {
    const mvhd = find(boxes, 'moov/mvhd').payload;
    const timescale = mvhd.readUInt32BE(12);
    expect(mvhd.readUInt32BE(16) / timescale).toBe(seconds);
    const tkhd = find(boxes, 'moov/trak/tkhd').payload;
    expect(tkhd.readUInt32BE(76) / 0x10000).toBe(720);
    expect(tkhd.readUInt32BE(80) / 0x10000).toBe(1280);
    expect(find(boxes, 'moov/trak/mdia/hdlr').payload.toString('latin1', 8, 12)).toBe('vide');
    const mdhd = find(boxes, 'moov/trak/mdia/mdhd').payload;
    expect(mdhd.readUInt32BE(16) / mdhd.readUInt32BE(12)).toBe(seconds);
  });

  it('has an H.264 sample table whose samples are exactly the mdat, starting with an IDR frame', () => {
    const stbl = 'moov/trak/mdia/minf/stbl';
    expect(find(boxes, stbl).children.map((b) => b.type)).toEqual(['stsd', 'stts', 'stss', 'stsc', 'stsz', 'stco']);
    const stsd = find(boxes, `${stbl}/stsd`).payload;
    expect(stsd.toString('latin1', 12, 16)).toBe('avc1');
    const stsz = find(boxes, `${stbl}/stsz`).payload;
    const count = stsz.readUInt32BE(8);
    expect(count).toBe(seconds * 24);
    let total = 0;
    for (let i = 0; i < count; i++) total += stsz.readUInt32BE(12 + i * 4);
    const mdat = find(boxes, 'mdat');
    expect(total).toBe(mdat.payload.length);
    expect(find(boxes, `${stbl}/stco`).payload.readUInt32BE(8)).toBe(mdat.start);
    expect(mdat.payload[4]! & 0x1f).toBe(5); // NAL unit type 5: IDR slice
  });

  it('stays small at the largest size and refuses odd sizes', () => {
    const big = tinyMp4(12, 1920, 1920);
    expect(big.length).toBeLessThan(40_000);
    expect(find(walk(big), 'moov/trak/tkhd').payload.readUInt32BE(80) / 0x10000).toBe(1920);
    expect(() => tinyMp4(1, 101, 50)).toThrow(RangeError);
  });

  it('is deterministic', () => {
    expect(tinyMp4(seconds, 720, 1280).equals(file)).toBe(true);
  });
});
