import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DatabaseInUseError, lockDatabase, lockPathOf } from './instance-lock.js';
import { openSqlite } from './open-sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-instance-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A process holding the lock the way a gateway does, until it is killed; resolves once it holds it. */
function holder(path: string): Promise<{ kill: () => Promise<void> }> {
  const script = `const SQLite = require('better-sqlite3'); const l = new SQLite(${JSON.stringify(lockPathOf(path))}, { timeout: 0 });
l.pragma('locking_mode = EXCLUSIVE'); l.exec('begin exclusive; create table if not exists holder (pid integer); commit;');
console.log('held'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', () =>
      resolve({
        kill: () =>
          new Promise((done) => {
            child.once('exit', () => done());
            child.kill('SIGKILL');
          }),
      }),
    );
  });
}

describe('lockDatabase', () => {
  it('lets one holder in at a time, and the next in once it lets go', () => {
    const path = join(dir, 'one.db');
    const first = lockDatabase(path);
    expect(() => lockDatabase(path)).toThrow(DatabaseInUseError);
    first.close();
    lockDatabase(path).close();
  });

  it('keeps a second process out, names the file, and is free again once the holder dies without closing', async () => {
    const path = join(dir, 'shared.db');
    const other = await holder(path);
    try {
      expect(() => openSqlite(path)).toThrow(/another Tollgate process is using .*shared\.db/);
    } finally {
      await other.kill();
    }
    const opened = openSqlite(path);
    await opened.checkpointer?.stop();
    opened.sqlite.close();
    opened.lock?.close();
  });
});
