/**
 * The `Idempotency-Key` request header: one bare token (RFC 9110 token characters, plus `:` and
 * `/` as an RFC 8941 token allows; a UUID is one) or one RFC 8941 quoted string, whose value is
 * the key. `abc` and `"abc"` are the same key. 1 to 255 characters once unquoted.
 */
import { GatewayError } from '../errors/index.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const MAX_KEY_LENGTH = 255;

const BARE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z:/]+$/;
/** RFC 8941 sf-string: printable ASCII, with `"` and `\` escaped by a backslash. */
const QUOTED = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

/** The key, or undefined when the header is absent; a malformed header is a 400 naming it. */
export function parseIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(', ') : value;
  let key: string | undefined;
  if (BARE.test(text)) key = text;
  else {
    const quoted = QUOTED.exec(text);
    if (quoted !== null) key = quoted[1]!.replace(/\\(["\\])/g, '$1');
  }
  if (key === undefined || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new GatewayError('invalid_idempotency_key', `The Idempotency-Key header must be one token or one quoted string of 1 to ${MAX_KEY_LENGTH} printable ASCII characters (got ${describe(text)}).`, {
      param: 'Idempotency-Key',
    });
  }
  return key;
}

function describe(text: string): string {
  if (text.length === 0) return 'an empty value';
  if (text.length > 40) return `${text.length} characters`;
  return JSON.stringify(text);
}
