/**
 * `${ENV_VAR}` and `${ENV_VAR:-default}` in the configuration's string values. Interpolation runs
 * on the parsed tree, never on the YAML text, so a variable's value can never inject structure.
 * `$${` writes a literal `${`.
 */
import { ConfigError } from './config-error.js';

const PATTERN = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const WHOLE = /^\$\{[^}]*\}$/;

export type Segment = string | number;

/**
 * Gives a value that was exactly one variable the type its field takes (`port: ${PORT}` is a
 * number); by default it stays text.
 */
export type VariableTyper = (path: readonly Segment[], text: string) => unknown;

export function interpolate(value: unknown, env: NodeJS.ProcessEnv, source: string, typed: VariableTyper = (_path, text) => text, path: Segment[] = []): unknown {
  if (typeof value === 'string') return interpolateString(value, env, source, typed, path);
  if (Array.isArray(value)) return value.map((item, i) => interpolate(item, env, source, typed, [...path, i]));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = interpolate(item, env, source, typed, [...path, key]);
    return out;
  }
  return value;
}

function interpolateString(text: string, env: NodeJS.ProcessEnv, source: string, typed: VariableTyper, path: Segment[]): unknown {
  if (!text.includes('${')) return text;
  const result = text.replace(PATTERN, (match, name: string | undefined, fallback: string | undefined) => {
    if (match === '$${') return '${';
    const found = env[name as string];
    if (found !== undefined && found !== '') return found;
    if (fallback !== undefined) return fallback;
    throw new ConfigError(source, fieldName(path), `environment variable ${name} is not set (write \${${name}:-default} to give a default)`);
  });
  return WHOLE.test(text) ? typed(path, result) : result;
}

/** `providers[0].api_key`, as errors name fields. */
function fieldName(path: readonly Segment[]): string | null {
  if (path.length === 0) return null;
  return path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}
