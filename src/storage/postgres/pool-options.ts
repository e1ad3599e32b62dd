/**
 * What every pg pool of Tollgate's gets besides its URL: nothing waits on PostgreSQL without end.
 * Without these a stalled database, a row lock held elsewhere or a connection that died silently
 * left requests waiting past their budgets (and holding their in-flight slots), the settlement
 * writer stuck on one commit, and the pool's queue growing.
 */
import type pg from 'pg';

/** How long to wait for a connection, new or from the pool. */
const CONNECT_TIMEOUT_MS = 5_000;
/** TCP keep-alive from this much idleness, so that a connection to a vanished server is noticed. */
const KEEP_ALIVE_AFTER_MS = 10_000;
/** On top of the server's statement timeout: the client stops waiting if the server cannot even say it gave up. */
const CLIENT_MARGIN_MS = 5_000;

/**
 * `waitForClient`: whether a caller may wait for a free connection without end. The blob pool's
 * connections are each held for a whole upload, which can take minutes, so a full pool is a
 * queue to wait in there, not an outage; everywhere else a connection is held for a statement.
 */
export function poolOptions(connectionString: string, max: number, statementTimeoutMs: number | null, options?: string, waitForClient = false): pg.PoolConfig {
  return {
    connectionString,
    max,
    connectionTimeoutMillis: waitForClient ? 0 : CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEP_ALIVE_AFTER_MS,
    // null: none, for the migrations, which may wait for another instance's as long as they take.
    ...(statementTimeoutMs === null ? {} : { statement_timeout: statementTimeoutMs, query_timeout: statementTimeoutMs + CLIENT_MARGIN_MS }),
    ...(options === undefined || options === '' ? {} : { options }),
  };
}
