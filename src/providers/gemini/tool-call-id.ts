/**
 * OpenAI tool call ids for Gemini function calls. Gemini names no ids, so they are made up; and
 * Gemini 3 answers a function call with a `thoughtSignature` that must come back, unchanged, on
 * that call in the next request or the request is refused. OpenAI callers echo tool call ids
 * verbatim and drop unknown fields, so the id is the one place the signature survives the round
 * trip: `call_<24 hex>` alone, or `call_<24 hex>_ts_<signature as base64url>` when there is one.
 * base64url keeps the id within [A-Za-z0-9_-], which other providers accept as an id too.
 */
import { randomBytes } from 'node:crypto';

const WITH_SIGNATURE = /^call_[0-9a-f]{24}_ts_([A-Za-z0-9_-]+)$/;

export function toolCallId(thoughtSignature?: string): string {
  const base = `call_${randomBytes(12).toString('hex')}`;
  if (thoughtSignature === undefined || thoughtSignature === '') return base;
  return `${base}_ts_${Buffer.from(thoughtSignature, 'base64').toString('base64url')}`;
}

/** The signature carried by an id this adapter made, in the standard base64 Gemini sent; else undefined. */
export function thoughtSignatureOf(id: string): string | undefined {
  const match = WITH_SIGNATURE.exec(id);
  if (match === null) return undefined;
  return Buffer.from(match[1] as string, 'base64url').toString('base64');
}
