/**
 * The gateway's shared Ajv instance for validating what callers send. Schemas are compiled once, at
 * module load, by the modules that own them; validation then runs on the hot path of every request.
 *
 * Options, and why:
 * - `allErrors: false`: stop at the first failure; we report one error per request, and it is cheaper.
 * - `messages: false`: Ajv's own English is never shown (see ajv-errors.ts), so it is not generated.
 * - `verbose` stays off: it would attach the failing value and schema to errors, but with it the
 *   compiled chat-request validator ran ~20x slower on valid input (measured ~0.3 µs -> ~6.5 µs).
 *   ajv-errors.ts finds the value and schema from the error's paths instead.
 * - `discriminator: true`: `oneOf` unions tagged by a property (a message's `role`, a part's `type`)
 *   jump straight to the matching branch, so errors name the precise field inside it.
 * - `strict: true`: a schema mistake (unknown keyword, keyword on the wrong type) fails at load time.
 * - No coercion, no defaults, no removal: the validated body is the caller's body, untouched.
 *
 * A component needing different options (e.g. `useDefaults` for the config file) should make its own
 * instance rather than change these.
 */
import { Ajv } from 'ajv';

/** Annotation keywords our schemas carry for error messages; Ajv ignores them when validating. */
export const ANNOTATIONS = {
  /** A human phrase for what the value must be: "a string or an array of content parts". */
  expected: 'expected',
  /** For enums and discriminator tags: value -> why that particular value is rejected. */
  rejected: 'rejected',
  /** Context for an enum or discriminator-tag error, shown as "must be ... for <note>". */
  note: 'note',
} as const;

export const ajv = new Ajv({
  allErrors: false,
  messages: false,
  discriminator: true,
  strict: true,
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
});

ajv.addVocabulary(Object.values(ANNOTATIONS));
