/**
 * A real, playable MP4 for the mock's videos, written by hand: H.264 Constrained Baseline video
 * (no audio) in an ISO-BMFF file (ftyp `isom`, then moov, then mdat, so players can start before
 * the end). Every frame is the same mid-grey picture, which is what makes a hand-written encoder
 * this small: the first frame is one IDR slice in which each macroblock is Intra 16×16 with DC
 * prediction and no residual (one byte each: with no neighbours DC prediction gives 128, and every
 * later macroblock predicts that same 128 from its neighbours), and every later frame is one P slice
 * that skips all its macroblocks. So a 1920×1920 clip is a ~15 KB first frame plus a few bytes a
 * frame, at 24 frames a second. Sizes must be even (4:2:0 cropping works in steps of two pixels);
 * other sizes are cropped from whole macroblocks through the SPS's frame cropping.
 */

const FPS = 24;
/** Ticks per second of the video track: a multiple of 24 and of 1000, as common muxers choose. */
const MEDIA_TIMESCALE = 12_288;
const TICKS_PER_FRAME = MEDIA_TIMESCALE / FPS;
/** Milliseconds: the movie header's clock. */
const MOVIE_TIMESCALE = 1000;
const LOG2_MAX_FRAME_NUM = 4;
const PROFILE_BASELINE = 66;
/** constraint_set0 and constraint_set1: Constrained Baseline, decodable by Main-profile decoders too. */
const CONSTRAINT_FLAGS = 0xc0;

/** H.264 levels (Table A-1): level_idc, max macroblocks a frame, max macroblocks a second. */
const LEVELS: ReadonlyArray<readonly [number, number, number]> = [
  [10, 99, 1_485], [11, 396, 3_000], [12, 396, 6_000], [13, 396, 11_880], [20, 396, 11_880],
  [21, 792, 19_800], [22, 1_620, 20_250], [30, 1_620, 40_500], [31, 3_600, 108_000], [32, 5_120, 216_000],
  [40, 8_192, 245_760], [42, 8_704, 522_240], [50, 22_080, 589_824], [51, 36_864, 983_040], [52, 36_864, 2_073_600],
];

/** Writes an RBSP bit by bit, with the Exp-Golomb codes H.264 headers use. */
class BitWriter {
  private readonly bytes: number[] = [];
  private current = 0;
  private filled = 0;

  bit(value: number): void {
    this.current = (this.current << 1) | (value & 1);
    if (++this.filled === 8) {
      this.bytes.push(this.current);
      this.current = 0;
      this.filled = 0;
    }
  }

  bits(value: number, count: number): void {
    for (let i = count - 1; i >= 0; i--) this.bit(Math.floor(value / 2 ** i) % 2);
  }

  /** Unsigned Exp-Golomb, ue(v). */
  ue(value: number): void {
    const coded = value + 1;
    const length = Math.floor(Math.log2(coded)) + 1;
    this.bits(0, length - 1);
    this.bits(coded, length);
  }

  /** Signed Exp-Golomb, se(v). */
  se(value: number): void {
    this.ue(value <= 0 ? -2 * value : 2 * value - 1);
  }

  /** rbsp_trailing_bits, then the bytes. */
  finish(): Buffer {
    this.bit(1);
    while (this.filled !== 0) this.bit(0);
    return Buffer.from(this.bytes);
  }
}

/** A NAL unit: header byte, then the RBSP with emulation prevention (no 00 00 0x inside). */
function nalUnit(refIdc: number, type: number, rbsp: Buffer): Buffer {
  const out: number[] = [(refIdc << 5) | type];
  let zeros = 0;
  for (const byte of rbsp) {
    if (zeros >= 2 && byte <= 3) {
      out.push(3);
      zeros = 0;
    }
    out.push(byte);
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return Buffer.from(out);
}

interface Geometry {
  readonly width: number;
  readonly height: number;
  readonly widthMbs: number;
  readonly heightMbs: number;
}

function levelFor(geometry: Geometry): number {
  const frameMbs = geometry.widthMbs * geometry.heightMbs;
  const longestSide = Math.max(geometry.widthMbs, geometry.heightMbs);
  const level = LEVELS.find(([, maxFrameMbs, maxMbsPerSecond]) =>
    frameMbs <= maxFrameMbs && frameMbs * FPS <= maxMbsPerSecond && longestSide ** 2 <= 8 * maxFrameMbs);
  return (level ?? LEVELS[LEVELS.length - 1]!)[0];
}

function sequenceParameterSet(geometry: Geometry, level: number): Buffer {
  const w = new BitWriter();
  w.bits(PROFILE_BASELINE, 8);
  w.bits(CONSTRAINT_FLAGS, 8);
  w.bits(level, 8);
  w.ue(0); // seq_parameter_set_id
  w.ue(LOG2_MAX_FRAME_NUM - 4);
  w.ue(2); // pic_order_cnt_type 2: display order is decode order, nothing in the slice headers
  w.ue(1); // max_num_ref_frames
  w.bit(0); // gaps_in_frame_num_value_allowed_flag
  w.ue(geometry.widthMbs - 1);
  w.ue(geometry.heightMbs - 1);
  w.bit(1); // frame_mbs_only_flag
  w.bit(1); // direct_8x8_inference_flag
  const cropRight = (geometry.widthMbs * 16 - geometry.width) / 2;
  const cropBottom = (geometry.heightMbs * 16 - geometry.height) / 2;
  const cropped = cropRight > 0 || cropBottom > 0;
  w.bit(cropped ? 1 : 0);
  if (cropped) {
    w.ue(0);
    w.ue(cropRight);
    w.ue(0);
    w.ue(cropBottom);
  }
  w.bit(0); // vui_parameters_present_flag: the container carries the timing
  return nalUnit(3, 7, w.finish());
}

function pictureParameterSet(): Buffer {
  const w = new BitWriter();
  w.ue(0); // pic_parameter_set_id
  w.ue(0); // seq_parameter_set_id
  w.bit(0); // entropy_coding_mode_flag: CAVLC
  w.bit(0); // bottom_field_pic_order_in_frame_present_flag
  w.ue(0); // num_slice_groups_minus1
  w.ue(0); // num_ref_idx_l0_default_active_minus1
  w.ue(0); // num_ref_idx_l1_default_active_minus1
  w.bit(0); // weighted_pred_flag
  w.bits(0, 2); // weighted_bipred_idc
  w.se(0); // pic_init_qp_minus26
  w.se(0); // pic_init_qs_minus26
  w.se(0); // chroma_qp_index_offset
  w.bit(0); // deblocking_filter_control_present_flag
  w.bit(0); // constrained_intra_pred_flag
  w.bit(0); // redundant_pic_cnt_present_flag
  return nalUnit(3, 8, w.finish());
}

/** The first frame: every macroblock I_16x16_2_0_0 (DC prediction, no coded residual). */
function greyIdrSlice(geometry: Geometry): Buffer {
  const w = new BitWriter();
  w.ue(0); // first_mb_in_slice
  w.ue(7); // slice_type: I, as every slice of the picture
  w.ue(0); // pic_parameter_set_id
  w.bits(0, LOG2_MAX_FRAME_NUM); // frame_num
  w.ue(0); // idr_pic_id
  w.bit(0); // no_output_of_prior_pics_flag
  w.bit(0); // long_term_reference_flag
  w.se(0); // slice_qp_delta
  for (let mb = geometry.widthMbs * geometry.heightMbs; mb > 0; mb--) {
    w.ue(3); // mb_type I_16x16_2_0_0
    w.ue(0); // intra_chroma_pred_mode: DC
    w.se(0); // mb_qp_delta
    w.bit(1); // Intra16x16DCLevel coeff_token (nC 0): no coefficients
  }
  return nalUnit(3, 5, w.finish());
}

/** A later frame: one P slice whose macroblocks are all skipped (a copy of the previous frame). */
function skippedPSlice(geometry: Geometry, frameNum: number): Buffer {
  const w = new BitWriter();
  w.ue(0); // first_mb_in_slice
  w.ue(5); // slice_type: P, as every slice of the picture
  w.ue(0); // pic_parameter_set_id
  w.bits(frameNum % 2 ** LOG2_MAX_FRAME_NUM, LOG2_MAX_FRAME_NUM);
  w.bit(0); // num_ref_idx_active_override_flag
  w.bit(0); // ref_pic_list_modification_flag_l0
  w.bit(0); // adaptive_ref_pic_marking_mode_flag: sliding window
  w.se(0); // slice_qp_delta
  w.ue(geometry.widthMbs * geometry.heightMbs); // mb_skip_run: the whole picture
  return nalUnit(2, 1, w.finish());
}

function u8(value: number): Buffer {
  return Buffer.of(value);
}

function u16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(value);
  return b;
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value);
  return b;
}

function zeros(count: number): Buffer {
  return Buffer.alloc(count);
}

function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  return Buffer.concat([u32(8 + body.length), Buffer.from(type, 'latin1'), body]);
}

function fullBox(type: string, flags: number, ...payload: Buffer[]): Buffer {
  return box(type, u32(flags & 0xffffff), ...payload); // version 0
}

/** The identity matrix of mvhd and tkhd, in 16.16 and 2.30 fixed point. */
const UNITY_MATRIX = Buffer.concat([0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000].map(u32));

function sampleEntry(geometry: Geometry, sps: Buffer, pps: Buffer, level: number): Buffer {
  const avcC = box(
    'avcC',
    u8(1), u8(PROFILE_BASELINE), u8(CONSTRAINT_FLAGS), u8(level),
    u8(0xff), // 4-byte NAL lengths
    u8(0xe1), u16(sps.length), sps, // one SPS
    u8(1), u16(pps.length), pps, // one PPS
  );
  const compressorName = zeros(32);
  compressorName.write('\x0dTollgate mock', 'latin1');
  return box(
    'avc1',
    zeros(6), u16(1), // reserved, data_reference_index
    zeros(16), // pre_defined and reserved
    u16(geometry.width), u16(geometry.height),
    u32(0x480000), u32(0x480000), // 72 dpi
    zeros(4), u16(1), // reserved, frame_count
    compressorName,
    u16(0x18), u16(0xffff), // depth, pre_defined -1
    avcC,
  );
}

function movie(geometry: Geometry, samples: readonly Buffer[], sps: Buffer, pps: Buffer, level: number, mdatPayloadOffset: number): Buffer {
  const movieDuration = Math.round((samples.length / FPS) * MOVIE_TIMESCALE);
  const mediaDuration = samples.length * TICKS_PER_FRAME;
  const mvhd = fullBox('mvhd', 0, u32(0), u32(0), u32(MOVIE_TIMESCALE), u32(movieDuration), u32(0x10000), u16(0x100), zeros(10), UNITY_MATRIX, zeros(24), u32(2));
  const tkhd = fullBox('tkhd', 3, u32(0), u32(0), u32(1), zeros(4), u32(movieDuration), zeros(8), zeros(8), UNITY_MATRIX, u32(geometry.width * 0x10000), u32(geometry.height * 0x10000));
  const mdhd = fullBox('mdhd', 0, u32(0), u32(0), u32(MEDIA_TIMESCALE), u32(mediaDuration), u16(0x55c4 /* 'und' */), u16(0));
  const hdlr = fullBox('hdlr', 0, u32(0), Buffer.from('vide', 'latin1'), zeros(12), Buffer.from('VideoHandler\0', 'latin1'));
  const stbl = box(
    'stbl',
    fullBox('stsd', 0, u32(1), sampleEntry(geometry, sps, pps, level)),
    fullBox('stts', 0, u32(1), u32(samples.length), u32(TICKS_PER_FRAME)),
    fullBox('stss', 0, u32(1), u32(1)), // only the first frame is a sync sample
    fullBox('stsc', 0, u32(1), u32(1), u32(samples.length), u32(1)), // all samples in one chunk
    fullBox('stsz', 0, u32(0), u32(samples.length), ...samples.map((s) => u32(s.length))),
    fullBox('stco', 0, u32(1), u32(mdatPayloadOffset)),
  );
  const minf = box('minf', fullBox('vmhd', 1, zeros(8)), box('dinf', fullBox('dref', 0, u32(1), fullBox('url ', 1))), stbl);
  return box('moov', mvhd, box('trak', tkhd, box('mdia', mdhd, hdlr, minf)));
}

/** An MP4 of `seconds` (whole frames at 24 fps, at least one) of mid-grey video at `width`×`height` (even, ≥ 2). */
export function tinyMp4(seconds: number, width: number, height: number): Buffer {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 2 || height < 2 || width % 2 !== 0 || height % 2 !== 0) {
    throw new RangeError(`tinyMp4 needs even dimensions of at least 2 pixels, got ${width}x${height}`);
  }
  const geometry: Geometry = { width, height, widthMbs: Math.ceil(width / 16), heightMbs: Math.ceil(height / 16) };
  const level = levelFor(geometry);
  const sps = sequenceParameterSet(geometry, level);
  const pps = pictureParameterSet();
  const frames = Math.max(1, Math.round(seconds * FPS));
  const lengthPrefixed = (nal: Buffer): Buffer => Buffer.concat([u32(nal.length), nal]);
  const samples = [lengthPrefixed(greyIdrSlice(geometry))];
  for (let frame = 1; frame < frames; frame++) samples.push(lengthPrefixed(skippedPSlice(geometry, frame)));

  const ftyp = box('ftyp', Buffer.from('isom', 'latin1'), u32(0x200), Buffer.from('isomiso2avc1mp41', 'latin1'));
  const mdat = box('mdat', ...samples);
  // moov's size does not depend on the offset's value, so measure it once with a placeholder.
  const moovSize = movie(geometry, samples, sps, pps, level, 0).length;
  const moov = movie(geometry, samples, sps, pps, level, ftyp.length + moovSize + 8);
  return Buffer.concat([ftyp, moov, mdat]);
}
