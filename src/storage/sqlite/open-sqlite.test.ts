import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite } from './open-sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-open-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function pageSizeOf(path: string): Promise<number> {
  const opened = openSqlite(path);
  try {
    opened.sqlite.exec('create table if not exists t (x integer)');
    return opened.sqlite.pragma('page_size', { simple: true }) as number;
  } finally {
    await opened.checkpointer?.stop();
    opened.sqlite.close();
    opened.lock?.close();
  }
}

describe('openSqlite', () => {
  it('creates a new database file with 2 KB pages', async () => {
    expect(await pageSizeOf(join(dir, 'new.db'))).toBe(2048);
  });

  it('leaves the page size of an existing database as it was', async () => {
    const path = join(dir, 'old.db');
    const old = new SQLite(path);
    old.exec('create table t (x integer)');
    old.prepare('insert into t values (1)').run();
    const before = old.pragma('page_size', { simple: true }) as number;
    old.close();
    expect(before).toBe(4096);
    expect(await pageSizeOf(path)).toBe(4096);
    const reopened = new SQLite(path);
    expect(reopened.prepare('select x from t').pluck().get()).toBe(1);
    reopened.close();
  });
});
