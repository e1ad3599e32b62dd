/**
 * `tollgate keys ...`. `keys generate` prints a new random key for the configuration file (it
 * needs no gateway); the others manage keys through a running gateway's admin API.
 */
import { generateApiKey, redactKey } from '../auth/api-key.js';
import { keyIdOf } from '../auth/key-shape.js';
import type { ApiKeyView, CreatedApiKeyView, DeletedApiKeyView, ListView } from '../admin/views.js';
import { parseCommand, seg, type ParsedCommand } from './admin-client.js';
import { fields, orDash, printJson, scopeText, table, time } from './output.js';
import { UsageError } from './usage-error.js';

export const KEYS_HELP = `  keys generate                         Print a new random API key for the configuration file.
  keys list ACCOUNT                     The account's keys (ids, never secrets).
  keys show KEY                         One key.
  keys create ACCOUNT [--name N] [SCOPE]
                                        Create a key; the key is printed once, on stdout.
  keys disable KEY | keys enable KEY    Refuse (401 api_key_disabled) or serve the key again.
  keys delete KEY                       Delete the key (its usage and charges stay).
  keys set-scope KEY SCOPE | --none     Narrow the key to SCOPE, or lift its scope.
  KEY is the key id (the 12 characters after sk-tg-); a whole key is accepted
  and only its id is sent. SCOPE: --models a,b --endpoints c --sdks d (lists
  of names or globs), or --scope '{"models":["gpt-*"]}'.`;

const SCOPE_OPTIONS = {
  models: { type: 'string' },
  endpoints: { type: 'string' },
  sdks: { type: 'string' },
  scope: { type: 'string' },
} as const;

/** The key id from an id, a redacted key or a whole key (whose secret is never sent). */
function keyIdArg(text: string): string {
  const id = keyIdOf(text);
  if (id === undefined) throw new UsageError(`"${text.startsWith('sk-tg-') ? redactKey(text.slice(6, 18)) : text}" is not a key id (the 12 characters after sk-tg-)`);
  return id;
}

const EXAMPLES = { models: 'gpt-*', endpoints: 'chat/completions', sdks: 'openai-js' } as const;

const list = (text: string): string[] => text.split(',').map((s) => s.trim()).filter((s) => s !== '');

/** The scope the options describe, or undefined when they name none. */
function scopeFrom(cmd: ParsedCommand): Record<string, unknown> | undefined {
  const { values } = cmd;
  const json = values.scope as string | undefined;
  const lists = (['models', 'endpoints', 'sdks'] as const).filter((k) => values[k] !== undefined);
  if (json !== undefined) {
    if (lists.length > 0) throw new UsageError(`give the scope either as --scope JSON or as --${lists[0]}, not both`);
    try {
      const parsed: unknown = JSON.parse(json);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      return parsed as Record<string, unknown>;
    } catch {
      throw new UsageError(`--scope must be a JSON object such as '{"models":["gpt-*"]}' (got ${json})`);
    }
  }
  if (lists.length === 0) return undefined;
  return Object.fromEntries(
    lists.map((k) => {
      const names = list(values[k] as string);
      // An empty list would match nothing: the key would be refused on every request.
      if (names.length === 0) throw new UsageError(`--${k} needs at least one name or glob, such as --${k} '${EXAMPLES[k]}' (leave it out to allow every one the tier allows)`);
      return [k, names];
    }),
  );
}

export function keyBlock(key: ApiKeyView): string {
  return fields([
    ['id', key.id],
    ['key', key.redacted],
    ['account', key.account_id],
    ['name', orDash(key.name)],
    ['status', key.status],
    ['scope', scopeText(key.scope)],
    ['created', time(key.created_at)],
  ]);
}

function generate(argv: string[]): number {
  if (argv.length > 0) throw new UsageError(`unexpected argument "${argv[0]}" (usage: tollgate keys generate)`);
  const { key, id } = generateApiKey();
  console.log(key);
  console.error(`Key id ${redactKey(id)}. Put the key in an environment variable and reference it from accounts[].keys[].key as \${VAR}.`);
  return 0;
}

export async function keys(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'generate':
      return generate(rest);
    case 'list': {
      const cmd = parseCommand(rest, {}, ['ACCOUNT'], 'keys list ACCOUNT');
      const found = await cmd.client().get<ListView<ApiKeyView>>(`/accounts/${seg(cmd.positionals[0]!)}/keys`);
      if (cmd.json) printJson(found);
      else if (found.data.length === 0) console.log(`Account ${cmd.positionals[0]} has no keys.`);
      else console.log(table(['ID', 'NAME', 'STATUS', 'SCOPE', 'CREATED'], found.data.map((k) => [k.id, orDash(k.name), k.status, scopeText(k.scope), time(k.created_at)])));
      return 0;
    }
    case 'show': {
      const cmd = parseCommand(rest, {}, ['KEY'], 'keys show KEY');
      const key = await cmd.client().get<ApiKeyView>(`/keys/${keyIdArg(cmd.positionals[0]!)}`);
      if (cmd.json) printJson(key);
      else console.log(keyBlock(key));
      return 0;
    }
    case 'create': {
      const cmd = parseCommand(rest, { name: { type: 'string' }, ...SCOPE_OPTIONS }, ['ACCOUNT'], 'keys create ACCOUNT [--name N] [SCOPE]');
      const scope = scopeFrom(cmd);
      const body = { ...(cmd.values.name !== undefined ? { name: cmd.values.name } : {}), ...(scope !== undefined ? { scope } : {}) };
      const created = await cmd.client().post<CreatedApiKeyView>(`/accounts/${seg(cmd.positionals[0]!)}/keys`, body);
      if (cmd.json) printJson(created);
      else {
        console.log(created.key);
        console.error(`Created key ${created.redacted} for account ${created.account_id}. It is shown only now (only its hash is stored): keep it somewhere safe.`);
      }
      return 0;
    }
    case 'disable':
    case 'enable': {
      const cmd = parseCommand(rest, {}, ['KEY'], `keys ${sub} KEY`);
      const key = await cmd.client().patch<ApiKeyView>(`/keys/${keyIdArg(cmd.positionals[0]!)}`, { status: sub === 'disable' ? 'disabled' : 'active' });
      if (cmd.json) printJson(key);
      else console.log(`Key ${key.redacted} is now ${key.status}.`);
      return 0;
    }
    case 'set-scope': {
      const cmd = parseCommand(rest, { ...SCOPE_OPTIONS, none: { type: 'boolean' } }, ['KEY'], 'keys set-scope KEY (--models a,b --endpoints c --sdks d | --scope JSON | --none)');
      const scope = scopeFrom(cmd);
      if (cmd.values.none === true && scope !== undefined) throw new UsageError('give either --none or a scope, not both');
      if (cmd.values.none !== true && scope === undefined) throw new UsageError('keys set-scope needs a scope (--models, --endpoints, --sdks or --scope JSON), or --none to lift it');
      const key = await cmd.client().patch<ApiKeyView>(`/keys/${keyIdArg(cmd.positionals[0]!)}`, { scope: scope ?? null });
      if (cmd.json) printJson(key);
      else console.log(keyBlock(key));
      return 0;
    }
    case 'delete': {
      const cmd = parseCommand(rest, {}, ['KEY'], 'keys delete KEY');
      const deleted = await cmd.client().delete<DeletedApiKeyView>(`/keys/${keyIdArg(cmd.positionals[0]!)}`);
      if (cmd.json) printJson(deleted);
      else console.log(`Deleted key ${deleted.id}.`);
      return 0;
    }
    default:
      throw new UsageError(
        sub === undefined ? 'keys needs a command: generate, list, show, create, disable, enable, delete, set-scope' : `unknown keys command "${sub}" (try: tollgate keys generate)`,
      );
  }
}
