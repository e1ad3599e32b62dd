/**
 * How deeply a request body may nest objects and arrays. JSON.parse accepts any depth, but the
 * gateway's own recursive steps (the Idempotency-Key fingerprint, JSON.stringify of the upstream
 * body) run out of stack a few thousand levels down, which a 10 KB body reaches: refused at the
 * door it is the caller's 400, not a gateway fault after admission. No real request comes near it
 * (OpenAI's structured outputs allow 10 levels of schema).
 */
export const MAX_JSON_DEPTH = 128;

/** Whether the JSON `text` (already parsed successfully) nests deeper than `max`. */
export function nestsDeeperThan(text: string, max: number): boolean {
  // Each level takes at least two characters.
  if (text.length <= 2 * max) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // Strings are skipped whole: they hold most of a request's characters.
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && escaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) return false;
      i = end;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) return true;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
    }
  }
  return false;
}

/** Whether the quote at `at` is escaped: preceded by an odd number of backslashes. */
function escaped(text: string, at: number): boolean {
  let backslashes = 0;
  for (let j = at - 1; text.charCodeAt(j) === 92; j--) backslashes++;
  return backslashes % 2 === 1;
}
