/**
 * API keys: `sk-tg-<id>-<secret>`. The id (12 base62 characters) is public and is what the store
 * is indexed by; only a SHA-256 of the secret (40 base62 characters, about 238 bits) is stored.
 * A fast hash is right here because the secret is random, not a password: nothing to brute-force.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

import { KEY_ID_LENGTH as ID_LENGTH, KEY_PATTERN, KEY_SECRET_LENGTH as SECRET_LENGTH } from './key-shape.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export interface ParsedApiKey {
  id: string;
  secret: string;
}

/** Random base62 text with no modulo bias (bytes of 248 and above are rejected). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export function generateApiKey(): { key: string; id: string; secretHash: string } {
  const id = randomBase62(ID_LENGTH);
  const secret = randomBase62(SECRET_LENGTH);
  return { key: `sk-tg-${id}-${secret}`, id, secretHash: hashSecret(secret) };
}

export function parseApiKey(key: string): ParsedApiKey | null {
  const match = KEY_PATTERN.exec(key);
  return match ? { id: match[1] as string, secret: match[2] as string } : null;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time comparison of a presented secret against a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = createHash('sha256').update(secret).digest();
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}

/** A form safe for logs and listings: the public id only. */
export function redactKey(id: string): string {
  return `sk-tg-${id}-…`;
}
