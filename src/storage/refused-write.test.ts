import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { isRefusedWrite } from './refused-write.js';

const coded = (code: string) => Object.assign(new Error(code), { code });

describe('isRefusedWrite', () => {
  it('takes a value or a row the store refuses for what it is as refused', () => {
    const db = new SQLite(':memory:');
    db.exec('create table t (id integer primary key, v text not null)');
    const failure = (sql: string): unknown => {
      try {
        db.exec(sql);
      } catch (err) {
        return err;
      }
      return undefined;
    };
    expect(isRefusedWrite(failure('insert into t (id, v) values (1, null)'))).toBe(true);
    expect(isRefusedWrite(coded('22001'))).toBe(true); // PostgreSQL: value too long for type character varying(256)
    expect(isRefusedWrite(coded('23503'))).toBe(true); // PostgreSQL: foreign key violation
    db.close();
  });

  it('takes a store that cannot write now as no refusal: the write waits for it', () => {
    for (const code of ['SQLITE_FULL', 'SQLITE_BUSY', 'SQLITE_READONLY', 'SQLITE_IOERR_WRITE', '53100', '25006', '57014', '08006', '40P01', 'ECONNREFUSED']) {
      expect(isRefusedWrite(coded(code))).toBe(false);
    }
    expect(isRefusedWrite(new Error('Connection terminated unexpectedly'))).toBe(false);
    expect(isRefusedWrite(null)).toBe(false);
  });
});
