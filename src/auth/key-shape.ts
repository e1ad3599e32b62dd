/**
 * The shape of Tollgate's API keys, `sk-tg-<id>-<secret>`: a public id of 12 base62 characters
 * and a secret of 40. A leaf module, so that the error and log layers can mask keys in text
 * without depending on the rest of auth.
 */
export const KEY_ID_LENGTH = 12;
export const KEY_SECRET_LENGTH = 40;
export const KEY_PATTERN = /^sk-tg-([A-Za-z0-9]{12})-([A-Za-z0-9]{40})$/;
export const KEY_ID = /^[A-Za-z0-9]{12}$/;
/** A key id given as itself, as `sk-tg-<id>`, or inside a whole key: its id. */
const KEY_ID_IN = /^(?:sk-tg-)?([A-Za-z0-9]{12})(?:-.*)?$/s;

export function keyIdOf(text: string): string | undefined {
  return KEY_ID_IN.exec(text)?.[1];
}

/** Any part of a secret counts: a message that cut a key short would otherwise show most of it. */
const KEYS_IN_TEXT = /sk-tg-([A-Za-z0-9]{12})-[A-Za-z0-9]+/g;

/** The text with every key in it, whole or cut short, reduced to its public id (`sk-tg-<id>-…`). */
export function maskKeysIn(text: string): string {
  return text.includes('sk-tg-') ? text.replace(KEYS_IN_TEXT, 'sk-tg-$1-…') : text;
}
