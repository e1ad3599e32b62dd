/**
 * The peer: the Portkey gateway from npm, installed on first use into bench/.peer (its own
 * folder, not a dependency of Tollgate) and run with node, pointed at the same mock upstream.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export const PORTKEY_VERSION = '1.15.2';

export function ensurePortkey(benchDir: string): string {
  const prefix = join(benchDir, '.peer');
  const entry = join(prefix, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
  if (!existsSync(entry)) {
    mkdirSync(prefix, { recursive: true });
    console.log(`bench: installing @portkey-ai/gateway@${PORTKEY_VERSION} into ${prefix}`);
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', prefix, `@portkey-ai/gateway@${PORTKEY_VERSION}`], { stdio: 'inherit' });
  }
  return entry;
}
