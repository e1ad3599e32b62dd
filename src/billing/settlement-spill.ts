/**
 * Settlements the store would not take, kept in local files so that nothing acknowledged is lost:
 * at shutdown, those the store could not commit in time (it was down or hung) are written to an
 * `unsettled` file, committed at the next start before anything is served; a settlement the store
 * refuses on its own while it takes others (a value it cannot hold) goes to a `rejected` file, for
 * the operator, so that it no longer holds up every charge queued behind it. A commit is
 * idempotent (a charge and a usage record are keyed by their request), so a settlement that did
 * reach the store before it was spilled is not counted twice when it is committed again.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Settlement, Store } from '../storage/types.js';
import { isRefusedWrite } from '../storage/refused-write.js';

export type SpillKind = 'unsettled' | 'rejected';

/** Where the writer puts what it cannot commit; returns the file written. */
export interface SettlementSpill {
  write(kind: SpillKind, settlements: readonly Settlement[]): string;
}

const PREFIX = 'tollgate-';
/** Settlements committed at once when a file is read back. */
const RECOVERY_CHUNK = 200;

export class SettlementSpillDirectory implements SettlementSpill {
  constructor(readonly directory: string) {}

  /** Written whole or not at all: a temporary file, flushed to disk, then renamed. */
  write(kind: SpillKind, settlements: readonly Settlement[]): string {
    mkdirSync(this.directory, { recursive: true });
    const name = `${PREFIX}${kind}-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}.jsonl`;
    const path = join(this.directory, name);
    const temporary = `${path}.tmp`;
    const fd = openSync(temporary, 'w', 0o600);
    try {
      writeSync(fd, settlements.map((settlement) => JSON.stringify(settlement, withBytes)).join('\n') + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
    return path;
  }

  /**
   * Commits every `unsettled` file left by an earlier shutdown, then deletes it. Settlements the
   * store refuses for what they hold go to a `rejected` file; a file the store cannot take now (it
   * is down, full, read-only) stays whole for the next start, since a commit is idempotent.
   */
  async recover(store: Store, logger: Logger): Promise<void> {
    let names: string[];
    try {
      names = readdirSync(this.directory).filter((name) => name.startsWith(`${PREFIX}unsettled-`) && name.endsWith('.jsonl')).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const name of names) {
      const path = join(this.directory, name);
      const settlements = readFileSync(path, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line, toBytes) as Settlement);
      try {
        const rejected = await commitAll(store, settlements);
        if (rejected.length > 0) {
          const kept = this.write('rejected', rejected);
          logger.error({ file: kept, settlements: rejected.length }, 'settlements the store refuses were set aside');
        }
        unlinkSync(path);
        logger.warn({ file: path, committed: settlements.length - rejected.length }, 'committed the settlements left at the last shutdown');
      } catch (err) {
        logger.error({ err, file: path }, 'settlements left at the last shutdown could not be committed; they stay for the next start');
      }
    }
  }
}

/** Commits in chunks; a chunk that fails goes one by one. Returns those refused for what they hold; throws when the store cannot write. */
async function commitAll(store: Store, settlements: readonly Settlement[]): Promise<Settlement[]> {
  const rejected: Settlement[] = [];
  for (let at = 0; at < settlements.length; at += RECOVERY_CHUNK) {
    const chunk = settlements.slice(at, at + RECOVERY_CHUNK);
    try {
      await store.commitSettlements(chunk);
    } catch {
      for (const one of chunk) {
        try {
          await store.commitSettlements([one]);
        } catch (err) {
          if (!isRefusedWrite(err)) throw err;
          rejected.push(one);
        }
      }
    }
  }
  return rejected;
}

/** A recorded response's bytes, as base64 (JSON would spell a Buffer out byte by byte). */
function withBytes(this: unknown, key: string, value: unknown): unknown {
  const raw = (this as Record<string, unknown>)[key];
  return Buffer.isBuffer(raw) ? { $base64: raw.toString('base64') } : value;
}

function toBytes(_key: string, value: unknown): unknown {
  if (typeof value === 'object' && value !== null && typeof (value as { $base64?: unknown }).$base64 === 'string') {
    return Buffer.from((value as { $base64: string }).$base64, 'base64');
  }
  return value;
}
