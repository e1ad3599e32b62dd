/** Reading a configuration file: YAML, then `${ENV}` interpolation, then validation. */
import { readFileSync } from 'node:fs';
import { parse, YAMLParseError } from 'yaml';
import { ConfigError } from './config-error.js';
import { interpolate } from './interpolate.js';
import { validateConfig } from './validate.js';
import { ConfigSchema, type Config } from './schema.js';
import { variableTyper } from './variable-types.js';

const typeOfVariable = variableTyper(ConfigSchema);

export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(path, null, `cannot read the file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return parseConfigText(text, path, env);
}

export function parseConfigText(text: string, source: string, env: NodeJS.ProcessEnv = process.env): Config {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    if (err instanceof YAMLParseError) {
      const where = err.linePos?.[0];
      throw new ConfigError(source, null, `is not valid YAML${where ? ` (line ${where.line}, column ${where.col})` : ''}: ${err.message.split('\n')[0]}`);
    }
    throw err;
  }
  if (raw !== null && raw !== undefined && (typeof raw !== 'object' || Array.isArray(raw))) {
    throw new ConfigError(source, null, 'must be a YAML mapping at the top level');
  }
  return validateConfig(interpolate(raw, env, source, typeOfVariable), source);
}
