/** The `tollgate` command: dispatches to a subcommand and turns usage mistakes into exit status 2. */
import { readFileSync } from 'node:fs';
import { serve } from './serve.js';
import { keys } from './keys.js';
import { UsageError } from './usage-error.js';

const HELP = `Usage: tollgate <command> [options]

Commands:
  serve [--config FILE] [--port N] [--host H]
                      Serve the gateway. Without --config: the embedded default
                      (SQLite under ./data, the mock provider, a demo key).
  keys generate       Print a new random API key for the configuration file.
  help                Show this help.
  version             Print the version.

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
      case 'start':
        return await serve(rest);
      case 'keys':
        return keys(rest);
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
    throw err;
  }
}
