/**
 * `tollgate serve [--config FILE] [--port N] [--host H]`. Without --config it runs the embedded
 * default (SQLite under ./data, the mock provider, a demo key printed on first start).
 * The port is taken from --port, else the PORT variable, else the configuration.
 */
import { parseArgs } from 'node:util';
import { loadConfigFile } from '../config/load.js';
import { embeddedDefaultConfig } from '../config/embedded-default.js';
import { ConfigError } from '../config/config-error.js';
import { MAX_TIMER_MS, type Config } from '../config/schema.js';
import { createLogger } from '../logging/logger.js';
import { createGateway } from '../app/gateway.js';
import { ensureDemoAccount } from '../app/demo-account.js';
import { UsageError } from './usage-error.js';
import { CLOSE_GRACE_MS } from '../billing/settlement-writer.js';

/**
 * What the close may take beyond the drain and the settlements' grace: the streams' last frames
 * (1 s), the settlements the drain waits for (5 s), the blob puts (5 s), the store and Redis.
 */
const CLOSE_MARGIN_MS = 20_000;
const EXIT_AFTER_CLOSE_MS = 1_000;

function parsePort(value: string, source: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new UsageError(`${source} must be a port number from 0 to 65535 (got "${value}")`);
  return Number(value);
}

export async function serve(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { config: { type: 'string', short: 'c' }, port: { type: 'string', short: 'p' }, host: { type: 'string' } },
    strict: true,
  });
  let config: Config;
  try {
    config = values.config === undefined ? embeddedDefaultConfig() : loadConfigFile(values.config, env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`tollgate: configuration error in ${err.message}`);
      return 2;
    }
    throw err;
  }
  const port = values.port !== undefined ? parsePort(values.port, '--port') : env.PORT ? parsePort(env.PORT, 'PORT') : config.server.port;
  // An empty host would listen on every interface, as an empty server.host would.
  if (values.host === '') throw new UsageError('--host must be an address such as 127.0.0.1 or 0.0.0.0 (got "")');
  const host = values.host ?? config.server.host;

  const logger = createLogger(config.log.level);
  let gateway;
  try {
    gateway = await createGateway(config, logger);
  } catch (err) {
    console.error(`tollgate: cannot start: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  const demoKey = values.config === undefined ? await ensureDemoAccount(gateway.store) : null;
  let address;
  try {
    address = await gateway.listen(port, host);
  } catch (err) {
    await gateway.close();
    const code = (err as NodeJS.ErrnoException).code;
    console.error(`tollgate: cannot listen on ${host}:${port}: ${code === 'EADDRINUSE' ? 'the port is already in use' : (err as Error).message}`);
    return 1;
  }

  // One faulty request must never take the others down with it: log and keep serving.
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'));
  process.on('uncaughtException', (err) => logger.error({ err }, 'uncaught exception'));

  console.log(banner(address.url, config, values.config === undefined, demoKey));

  return new Promise<number>((resolve) => {
    let closing = false;
    /**
     * Ends the process with `code` once the close is over: a connection it could not close (a
     * store that stopped answering) must not keep the process alive past its grace period.
     */
    const exit = (code: number): void => {
      resolve(code);
      setTimeout(() => process.exit(code), EXIT_AFTER_CLOSE_MS).unref();
    };
    const stop = (signal: string): void => {
      if (closing) return;
      closing = true;
      logger.info({ signal }, 'shutting down');
      // The drain, the settlements' grace, and a margin for the rest: past it, the close is stuck.
      // Within what a timer can wait: a longer delay would fire at once (schema.ts, MAX_TIMER_MS).
      const bound = Math.min(config.server.shutdown_timeout_ms + CLOSE_GRACE_MS + CLOSE_MARGIN_MS, MAX_TIMER_MS);
      const stuck = setTimeout(() => {
        logger.error({ after_ms: bound }, 'shutdown did not finish; exiting');
        exit(1);
      }, bound);
      stuck.unref();
      gateway.close().then(
        () => {
          clearTimeout(stuck);
          exit(0);
        },
        (err: unknown) => {
          clearTimeout(stuck);
          logger.error({ err }, 'error while shutting down');
          exit(1);
        },
      );
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}

/** What start-up prints, in one write so that a reader of the output sees it whole. */
function banner(url: string, config: Config, embedded: boolean, demoKey: string | null): string {
  const lines = [`Tollgate listening on ${url} (OpenAI-compatible API at ${url}/v1)`];
  if (embedded) {
    lines.push(`Embedded default: storage ${config.storage.url}, models ${config.models.map((m) => m.id).join(', ')} on the built-in mock provider.`);
    if (demoKey !== null) {
      lines.push(`Demo API key (shown once, stored only as a hash): ${demoKey}`);
      lines.push(`Try: curl ${url}/v1/chat/completions -H "Authorization: Bearer ${demoKey}" -H "Content-Type: application/json" -d '{"model":"mock-chat","messages":[{"role":"user","content":"Hello"}]}'`);
    } else {
      lines.push('The demo key was printed when this data directory was first used; delete ./data to start over with a new one.');
    }
  }
  return lines.join('\n');
}
