import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import SQLite from 'better-sqlite3';
import { Checkpointer } from './checkpointer.js';
import { openSqlite } from './open-sqlite.js';
import { SqliteStore } from './sqlite-store.js';
import type { Settlement } from '../types.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-checkpointer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function charge(n: number): Settlement {
  const requestId = `req_${String(n).padStart(8, '0')}`;
  return { requestId, charge: { accountId: 'acct', kind: 'charge', amountMicros: -7, requestId, apiKeyId: 'key', note: null }, releaseReservation: false, usage: null };
}

const walBytes = (path: string): number => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);

describe('Checkpointer', () => {
  it('keeps the write-ahead log bounded under commits that never stop, and loses none of them', async () => {
    const path = join(dir, 'steady.db');
    // The copier at the normal priority: at nice 19 it would wait for the other test files that
    // share the machine's cores, which is its purpose in production and not what this test measures.
    const pauses: number[] = [];
    const store = new SqliteStore(openSqlite(path, { everyMs: 20, restartFrames: 300, copierNice: 0, onPauseEnd: (ms) => pauses.push(ms) }));
    await store.migrate();
    await store.createAccountIfAbsent({ id: 'acct', name: null, tier: 't', balanceMicros: 1_000_000 });
    // Steady load: a commit in every turn of the event loop, as a busy gateway makes them.
    const commits = 4_000;
    for (let n = 0; n < commits; n++) {
      await store.commitSettlements([charge(n)]);
      await new Promise((r) => setImmediate(r));
    }
    // A PASSIVE checkpoint alone never rewinds the log here: the file grows by every commit's
    // pages, to 80–87 MB by the end. Started over, it stays at a few MB; but the file keeps its
    // longest length, so one long spell without CPU for the worker (CI runs test files side by
    // side on two cores) leaves it at tens of MB (32 MB seen once). The bound separates the two.
    expect(walBytes(path)).toBeLessThan(50 * 2 ** 20);
    // Each restart held the commits for a while, and said how long (the metrics' histogram).
    expect(pauses.length).toBeGreaterThan(0);
    expect(pauses.every((ms) => ms >= 0 && ms < 10_000)).toBe(true);
    expect((await store.getAccount('acct'))?.balanceMicros).toBe(1_000_000 - 7 * commits);
    expect(await store.ledgerSum('acct')).toBe(1_000_000 - 7 * commits);
    await store.close();
  });
});

/**
 * Runs `write` over and over for 2.5 s while a reader holds the log as it is now, before the
 * copier's next turn: the restart, which holds the log's write lock throughout, waits for the
 * reader (up to the restarter's busy timeout, 1 s). Returns the event loop's longest gap.
 */
async function duringASlowRestart(path: string, write: () => Promise<void>): Promise<number> {
  const reader = new SQLite(path);
  reader.prepare('begin').run();
  reader.prepare('select count(*) from ledger_entries').get();
  const released = setTimeout(() => reader.prepare('commit').run(), 1_500);
  let longestGap = 0;
  let last = performance.now();
  const ticks = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, 5);
  try {
    const until = performance.now() + 2_500;
    while (performance.now() < until) await write();
  } finally {
    clearInterval(ticks);
    clearTimeout(released);
    reader.close();
  }
  return longestGap;
}

describe('Checkpointer: a slow restart', () => {
  it('holds the commits until the restart ends, rather than let one wait in SQLite on the event loop', async () => {
    const path = join(dir, 'slow-restart.db');
    const problems: string[] = [];
    const pauses: number[] = [];
    const store = new SqliteStore(openSqlite(path, { everyMs: 200, restartFrames: 20, copierNice: 0, slowPauseMs: 100, onError: (message) => problems.push(message), onPauseEnd: (ms) => pauses.push(ms) }));
    await store.migrate();
    await store.createAccountIfAbsent({ id: 'acct', name: null, tier: 't', balanceMicros: 1_000_000 });
    let n = 0;
    for (; n < 5; n++) await store.commitSettlements([charge(n)]);
    const longestGap = await duringASlowRestart(path, async () => {
      await store.commitSettlements([charge(n++)]);
      await new Promise((r) => setImmediate(r));
    });
    // Before, commits went on after 2 s (here 100 ms) and the next one waited in SQLite's busy
    // handler for the rest of the restart, the event loop with it: a gap of about 900 ms here.
    expect(longestGap).toBeLessThan(600);
    expect(problems.some((message) => message.includes('held the store\'s commits'))).toBe(true);
    // The restart waited for the reader (up to the restarter's busy timeout of 1 s): so did its pause.
    expect(Math.max(...pauses)).toBeGreaterThan(500);
    expect(await store.ledgerSum('acct')).toBe(1_000_000 - 7 * n);
    await store.close();
  });
});

describe('Checkpointer.stop', () => {
  it('leaves no timer behind that would keep the process alive after a shutdown', async () => {
    const timers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    const store = new SqliteStore(openSqlite(join(dir, 'stop.db'), { everyMs: 20 }));
    await store.migrate();
    await store.close();
    expect(timers()).toBeLessThanOrEqual(before);
  });
});

/** This process's threads at each nice value (Linux: the 19th field of /proc/self/task/TID/stat). */
function threadsAtNice(nice: number): number {
  let count = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) === nice) count++;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return count;
}

describe.runIf(existsSync('/proc/thread-self'))('Checkpointer priority', () => {
  it('runs the PASSIVE checkpoints on a thread of its own at the lowest priority, and no other thread', async () => {
    const before = threadsAtNice(19);
    const store = new SqliteStore(openSqlite(join(dir, 'nice.db'), { everyMs: 20 }));
    await store.migrate();
    const deadline = Date.now() + 5_000;
    while (threadsAtNice(19) === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(threadsAtNice(19) - before).toBe(1);
    // The thread that runs the tests (and would run the gateway) keeps its priority.
    const main = readFileSync('/proc/thread-self/stat', 'utf8');
    expect(Number(main.slice(main.lastIndexOf(')') + 2).split(' ')[16])).toBe(0);
    await store.close();
  });
});

/**
 * A driver module for the workers that is better-sqlite3 itself, except in the restarter: there it
 * fails to load (`refuse`) or ends the worker when asked to restart the log (`exit`).
 */
function restarterDriver(name: string, failure: 'refuse' | 'exit'): string {
  const path = join(dir, `${name}.cjs`);
  const real = JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'));
  writeFileSync(
    path,
    `const { workerData } = require('node:worker_threads');
const SQLite = require(${real});
if (workerData.role !== 'restarter') module.exports = SQLite;
else if (${JSON.stringify(failure)} === 'refuse') throw new Error('no driver for the restarter');
else module.exports = class extends SQLite {
  pragma(source, options) {
    if (source.includes('RESTART')) process.exit(1);
    return super.pragma(source, options);
  }
};
`,
  );
  return path;
}

/** A database in WAL mode whose log holds more frames than the checkpointer's restart threshold. */
function logWithFrames(path: string): SQLite.Database {
  const db = new SQLite(path);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('create table t (n integer)');
  for (let n = 0; n < 50; n++) db.prepare('insert into t values (?)').run(n);
  return db;
}

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

describe('Checkpointer: its restarter gone', () => {
  it('holds no commit back once the restarter has exited, and says why the log is not started over', async () => {
    const path = join(dir, 'no-restarter.db');
    const db = logWithFrames(path);
    const problems: string[] = [];
    const gate = { pauses: 0, resumes: 0 };
    // The copier's first look comes half a second after it starts: the restarter, failing as it loads, has exited by then.
    const checkpointer = new Checkpointer(path, restarterDriver('refuse', 'refuse'), { everyMs: 500, restartFrames: 5, copierNice: 0, onError: (m) => problems.push(m) });
    checkpointer.attach({ pause: () => gate.pauses++, resume: () => gate.resumes++ });
    await until(() => problems.some((m) => m.includes('cannot be started over')));
    // Asked once: the copier waits for an answer that will not come, and goes on with PASSIVE checkpoints.
    await new Promise((r) => setTimeout(r, 1_200));
    expect(problems.filter((m) => m.includes('cannot be started over'))).toHaveLength(1);
    expect(gate.pauses).toBe(0);
    await checkpointer.stop();
    db.close();
  });

  it('lifts a pause when the restarter exits in the middle of it', async () => {
    const path = join(dir, 'restarter-exits.db');
    const db = logWithFrames(path);
    const gate = { pauses: 0, resumes: 0 };
    const checkpointer = new Checkpointer(path, restarterDriver('exit', 'exit'), { everyMs: 50, restartFrames: 5, copierNice: 0 });
    checkpointer.attach({ pause: () => gate.pauses++, resume: () => gate.resumes++ });
    await until(() => gate.resumes > 0);
    expect(gate).toEqual({ pauses: 1, resumes: 1 });
    await checkpointer.stop();
    db.close();
  });
});

describe('Checkpointer: the query layer during a slow restart', () => {
  it('makes its statements wait for the restart instead of holding the event loop in SQLite', async () => {
    const path = join(dir, 'slow-restart-queries.db');
    const store = new SqliteStore(openSqlite(path, { everyMs: 200, restartFrames: 20, copierNice: 0 }));
    await store.migrate();
    await store.createAccountIfAbsent({ id: 'acct', name: null, tier: 't', balanceMicros: 1_000_000 });
    for (let n = 0; n < 5; n++) await store.commitSettlements([charge(n)]);
    // Writes through the query layer (the idempotency sweep, the admin API, files and jobs take this path).
    let written = 0;
    const longestGap = await duringASlowRestart(path, async () => {
      await store.createAccountIfAbsent({ id: `acct-${written}`, name: null, tier: 't', balanceMicros: 0 });
      written++;
      await new Promise((r) => setTimeout(r, 2));
    });
    // Without the gate, the first write after the restart began waited in the busy handler until the reader let go.
    expect(longestGap).toBeLessThan(600);
    expect(await store.getAccount(`acct-${written - 1}`)).not.toBeNull();
    await store.close();
  });
});
