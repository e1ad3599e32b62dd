/**
 * One gateway process per SQLite database. Each process keeps its accounts' balances and holds in
 * memory (billing/memory-credits.ts), so a second process on the same file, as an overlapping
 * restart would start, admits requests against balances the first is spending: accounts overdraw.
 * The lock is a small SQLite file beside the database, written once in exclusive locking mode: its
 * file lock lasts as long as the connection, and the operating system drops it with the process,
 * so a crash leaves nothing stale behind.
 */
import SQLite from 'better-sqlite3';

export class DatabaseInUseError extends Error {
  constructor(path: string) {
    super(
      `storage.url: another Tollgate process is using ${path} (it holds ${lockPathOf(path)}). SQLite storage serves one process; stop the other first, or use PostgreSQL for several instances.`,
    );
    this.name = 'DatabaseInUseError';
  }
}

export function lockPathOf(path: string): string {
  return `${path}-lock`;
}

/** Takes the database's lock, or throws DatabaseInUseError at once; close the returned connection to let it go. */
export function lockDatabase(path: string): SQLite.Database {
  const lock = new SQLite(lockPathOf(path), { timeout: 0 });
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    // The first write in exclusive mode takes the file lock and keeps it until the connection closes.
    lock.exec('begin exclusive; create table if not exists holder (pid integer); delete from holder; commit;');
    lock.prepare('insert into holder (pid) values (?)').run(process.pid);
    return lock;
  } catch (err) {
    lock.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new DatabaseInUseError(path);
    throw err;
  }
}
