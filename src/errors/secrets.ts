/**
 * The provider credentials of this process (API keys, the values of configured headers such as
 * Azure's `api-key`), scrubbed from every error before it reaches a caller. Each adapter also
 * leaves its key out of what it relays; this is the one place no adapter can forget, for an
 * upstream that echoes a credential in a message, a `param` or a status field. Tollgate's own
 * keys, which a caller may put where an id or a path belongs, are cut to their public id.
 */
import { maskKeysIn } from '../auth/key-shape.js';

const secrets = new Set<string>();
/** Longest first: a secret that contains another is scrubbed whole, not around the shorter one. */
let ordered: string[] = [];

/**
 * Shorter values are not secrets worth the name (real provider keys are 20 to 200 characters),
 * and scrubbing them would mangle ordinary words: a local server's placeholder key ("anything",
 * "lm-studio") would vanish from every message that names it.
 */
const MIN_SECRET_LENGTH = 16;

/** Headers whose values are credentials (`api-key`, `Authorization`, `X-Auth-Token`…), not settings (`X-Auth-Mode`). */
const SECRET_HEADER = /^(proxy-)?authorization$|(^|-)(key|token|secret|password|signature)$/i;

export function keepSecret(value: string | undefined): void {
  if (value === undefined || value.length < MIN_SECRET_LENGTH || secrets.has(value)) return;
  secrets.add(value);
  ordered = [...secrets].sort((a, b) => b.length - a.length);
}

/** A provider's key and the credential headers configured for it. */
export function keepProviderSecrets(apiKey: string | undefined, headers: Readonly<Record<string, string>> = {}): void {
  keepSecret(apiKey);
  for (const [name, value] of Object.entries(headers)) {
    if (!SECRET_HEADER.test(name)) continue;
    keepSecret(value);
    // `Authorization: Bearer <key>`: the key alone may be echoed too.
    const token = /^\S+\s+(\S+)$/.exec(value)?.[1];
    keepSecret(token);
  }
}

export function scrubSecrets(text: string): string {
  let scrubbed = maskKeysIn(text);
  for (const secret of ordered) if (scrubbed.includes(secret)) scrubbed = scrubbed.split(secret).join('[redacted]');
  return scrubbed;
}
