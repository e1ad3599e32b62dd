/**
 * `${ENV_VAR}` and `${ENV_VAR:-default}` in the configuration's string values. Interpolation runs
 * on the parsed tree, never on the YAML text, so a variable's value can never inject structure.
 * `$${` writes a literal `${`. Values stay strings here: the validator turns a string into the
 * number or boolean a field takes (`port: ${PORT}`), and leaves a string field a string, so that
 * a token made of digits is not made a number.
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

function interpolateString(text: string, env: NodeJS.ProcessEnv, source: string, path: string): string {
  if (!text.includes('${')) return text;
  return text.replace(PATTERN, (match, name: string | undefined, fallback: string | undefined) => {
    if (match === '$${') return '${';
    const found = env[name as string];
    if (found !== undefined && found !== '') return found;
    if (fallback !== undefined) return fallback;
    throw new ConfigError(source, path || null, `environment variable ${name} is not set (write \${${name}:-default} to give a default)`);
  });
}
