/**
 * `${ENV_VAR}` and `${ENV_VAR:-default}` in the configuration's string values. Interpolation runs
 * on the parsed tree, never on the YAML text, so a variable's value can never inject structure.
 * `$${` writes a literal `${`.
 */
import { ConfigError } from './config-error.js';

const PATTERN = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export function interpolate(value: unknown, env: NodeJS.ProcessEnv, source: string, path = ''): unknown {
  if (typeof value === 'string') return interpolateString(value, env, source, path);
  if (Array.isArray(value)) return value.map((item, i) => interpolate(item, env, source, `${path}[${i}]`));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = interpolate(item, env, source, path === '' ? key : `${path}.${key}`);
    }
    return out;
  }
  return value;
}

function interpolateString(text: string, env: NodeJS.ProcessEnv, source: string, path: string): string | number | boolean {
  if (!text.includes('${')) return text;
  const whole = /^\$\{[^}]*\}$/.test(text);
  const result = text.replace(PATTERN, (match, name: string | undefined, fallback: string | undefined) => {
    if (match === '$${') return '${';
    const found = env[name as string];
    if (found !== undefined && found !== '') return found;
    if (fallback !== undefined) return fallback;
    throw new ConfigError(source, path || null, `environment variable ${name} is not set (write \${${name}:-default} to give a default)`);
  });
  // A value that is exactly one variable takes the variable's type, so `port: ${PORT}` is a number.
  if (whole && /^-?\d+(\.\d+)?$/.test(result)) return Number(result);
  if (whole && (result === 'true' || result === 'false')) return result === 'true';
  return result;
}
