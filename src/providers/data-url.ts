/**
 * Inline media as callers send it (`data:` URLs, RFC 2397) for the providers that take it only as
 * base64 with a media type beside it (Anthropic, Gemini).
 */
import { GatewayError } from '../errors/index.js';
import { rasterTypeOf } from './raster-type.js';

export interface InlineData {
  /** The type the URL names, in lower case. */
  mediaType: string;
  base64: string;
}

export function parseDataUrl(url: string, param: string): InlineData {
  const comma = url.indexOf(',');
  if (comma < 0) throw new GatewayError('invalid_parameter', 'Malformed data: URL.', { param });
  const meta = url.slice('data:'.length, comma).split(';');
  const mediaType = (meta[0] ?? '').trim().toLowerCase();
  if (mediaType === '') throw new GatewayError('invalid_parameter', 'A data: URL must name its media type.', { param });
  const payload = url.slice(comma + 1);
  if (meta.slice(1).some((p) => p.trim().toLowerCase() === 'base64')) return { mediaType, base64: payload };
  const bytes = percentDecoded(payload);
  if (bytes === undefined) throw new GatewayError('invalid_parameter', 'Malformed data: URL: a "%" must be followed by two hexadecimal digits.', { param });
  return { mediaType, base64: bytes.toString('base64') };
}

/**
 * The bytes a percent-encoded payload stands for: each `%XX` is one byte (a PNG's `%89` is the
 * byte 0x89, not text to decode as UTF-8), other characters their UTF-8 bytes.
 */
function percentDecoded(payload: string): Buffer | undefined {
  // Never longer than the payload's own UTF-8 bytes: three characters become one byte.
  const out = Buffer.allocUnsafe(Buffer.byteLength(payload, 'utf8'));
  let length = 0;
  let i = 0;
  while (i < payload.length) {
    if (payload.charCodeAt(i) === 0x25 /* % */) {
      const byte = hexByte(payload, i + 1);
      if (byte === undefined) return undefined;
      out[length++] = byte;
      i += 3;
      continue;
    }
    let end = payload.indexOf('%', i);
    if (end === -1) end = payload.length;
    length += out.write(payload.slice(i, end), length, 'utf8');
    i = end;
  }
  return out.subarray(0, length);
}

function hexByte(text: string, at: number): number | undefined {
  const high = hexDigit(text.charCodeAt(at));
  const low = hexDigit(text.charCodeAt(at + 1));
  return high === undefined || low === undefined ? undefined : high * 16 + low;
}

function hexDigit(code: number): number | undefined {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 65 && code <= 70) return code - 55;
  if (code >= 97 && code <= 102) return code - 87;
  return undefined;
}

/**
 * The type to declare for an inline picture: the one its first bytes show when they show a PNG,
 * JPEG, GIF or WebP, else the one the caller named (`image/jpg` read as `image/jpeg`). Anthropic
 * refuses a picture whose bytes disagree with its declared type, and the picture stays in the
 * conversation, so one mislabelled screenshot would fail every later turn.
 */
export function inlineImageType(declared: string, base64: string): string {
  // 24 base64 characters are 18 bytes, enough for every signature rasterTypeOf reads.
  const sniffed = rasterTypeOf(Buffer.from(base64.slice(0, 24), 'base64'));
  if (sniffed !== undefined) return sniffed;
  return declared === 'image/jpg' ? 'image/jpeg' : declared;
}
