/** The `tollgate` command: dispatches to a subcommand and turns usage mistakes into exit status 2. */
import { readFileSync } from 'node:fs';
import { keys, KEYS_HELP } from './keys.js';
import { accounts, ACCOUNTS_HELP } from './accounts.js';
import { usage, USAGE_HELP } from './usage-report.js';
import { ApiError, DEFAULT_URL } from './admin-client.js';
import { UsageError } from './usage-error.js';

const HELP = `Usage: tollgate <command> [options]

Commands:
  serve [--config FILE] [--port N] [--host H]
                                        Serve the gateway. Without --config: the embedded
                                        default (SQLite under ./data, the mock provider,
                                        a demo key).
  help                                  Show this help.
  version                               Print the version.

Operator commands, run against a running gateway's admin API (/admin/v1):
${ACCOUNTS_HELP}
${KEYS_HELP}
${USAGE_HELP}

  Each takes --url URL (default: TOLLGATE_URL, else ${DEFAULT_URL}),
  --token TOKEN (default: TOLLGATE_ADMIN_TOKEN; the gateway's server.admin_token)
  and --json (print the API's JSON instead of tables). Exit status: 0 done,
  1 the gateway refused or could not be reached, 2 a mistake on the command line.

Environment: PORT chooses the port when --port is not given; \${VAR} in the
configuration file is replaced by the variable's value.`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
      case 'start': {
        // Loaded only here: the gateway's modules take about a second to load, which the
        // operator commands (HTTP clients of a running gateway) should not pay.
        const { serve } = await import('./serve.js');
        return await serve(rest);
      }
      case 'keys':
        return await keys(rest);
      case 'accounts':
        return await accounts(rest);
      case 'usage':
        return await usage(rest);
      case 'version':
      case '--version':
        console.log(version());
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        console.log(HELP);
        return 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`tollgate: ${(err as Error).message}\nRun "tollgate help" for usage.`);
      return 2;
    }
    if (err instanceof ApiError) {
      console.error(`tollgate: ${err.message}${err.code !== null ? ` (${err.code})` : ''}`);
      return 1;
    }
    throw err;
  }
}
