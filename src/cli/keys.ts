/** `tollgate keys generate`: a new random key to put in the configuration (via an env variable). */
import { generateApiKey, redactKey } from '../auth/api-key.js';
import { UsageError } from './usage-error.js';

export function keys(argv: string[]): number {
  const [sub] = argv;
  if (sub !== 'generate') throw new UsageError(`unknown keys command "${sub ?? ''}" (try: tollgate keys generate)`);
  const { key, id } = generateApiKey();
  console.log(key);
  console.error(`Key id ${redactKey(id)}. Put the key in an environment variable and reference it from accounts[].keys[].key as \${VAR}.`);
  return 0;
}
