/**
 * `${ENV_VAR}` and `${ENV_VAR:-default}` in the configuration's string values. Interpolation runs
 * on the parsed tree, never on the YAML text, so a variable's value can never inject structure.
 * `$${` writes a literal `${`. Any other `${` is an error: kept as text, `${OPENAI-API-KEY}` would
 * be sent upstream as the key itself.
 */
import { ConfigError } from './config-error.js';

/** An escape, a well-formed reference, or (the last branch) a `${` that is neither. */
const PATTERN = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$\{/g;
const WHOLE = /^\$\{[^}]*\}$/;
const REFERENCE_FORMS = 'write ${NAME} or ${NAME:-default}, NAME being letters, digits and _ not starting with a digit, or $${ for a literal ${';
/** How much of a malformed reference its error shows: the text after it may be a secret. */
const SHOWN = 40;

export type Segment = string | number;

/**
 * Gives a value that was exactly one variable the type its field takes (`port: ${PORT}` is a
 * number); by default it stays text.
 */
export type VariableTyper = (path: readonly Segment[], text: string) => unknown;

export function interpolate(value: unknown, env: NodeJS.ProcessEnv, source: string, typed: VariableTyper = (_path, text) => text, path: Segment[] = [], within: readonly object[] = []): unknown {
  if (typeof value === 'string') return interpolateString(value, env, source, typed, path);
  if (value === null || typeof value !== 'object') return value;
  // YAML lets an alias point into its own anchor (`a: &x [*x]`): a tree without end, which the
  // walk below would follow until the stack ran out.
  if (within.includes(value)) throw new ConfigError(source, fieldName(path), 'contains itself (a YAML alias inside its own anchor)');
  const inside = [...within, value];
  if (Array.isArray(value)) return value.map((item, i) => interpolate(item, env, source, typed, [...path, i], inside));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = interpolate(item, env, source, typed, [...path, key], inside);
  return out;
}

function interpolateString(text: string, env: NodeJS.ProcessEnv, source: string, typed: VariableTyper, path: Segment[]): unknown {
  if (!text.includes('${')) return text;
  const fail = (detail: string): never => {
    throw new ConfigError(source, fieldName(path), detail);
  };
  const result = text.replace(PATTERN, (match, name: string | undefined, fallback: string | undefined, offset: number) => {
    if (match === '$${') return '${';
    if (name === undefined) return fail(`${shown(text.slice(offset))} is not a variable reference (${REFERENCE_FORMS})`);
    // References do not nest: `${A:-${B}}` would give A's value or the text "${B" and a stray "}".
    if (fallback?.includes('${')) fail(`${shown(match)} has a reference in its default, which is not supported (${REFERENCE_FORMS})`);
    const found = env[name];
    if (found !== undefined && found !== '') return found;
    if (fallback !== undefined) return fallback;
    return fail(`environment variable ${name} is not set (write \${${name}:-default} to give a default)`);
  });
  return WHOLE.test(text) ? typed(path, result) : result;
}

/** A malformed reference for its error: up to its closing brace, cut short. */
function shown(reference: string): string {
  const close = reference.indexOf('}');
  const whole = close === -1 ? reference : reference.slice(0, close + 1);
  return JSON.stringify(whole.length > SHOWN ? `${whole.slice(0, SHOWN)}…` : whole);
}

/** `providers[0].api_key`, as errors name fields. */
function fieldName(path: readonly Segment[]): string | null {
  if (path.length === 0) return null;
  return path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}
