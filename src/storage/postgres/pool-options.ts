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

export function poolOptions(connectionString: string, max: number, statementTimeoutMs: number, options?: string): pg.PoolConfig {
  return {
    connectionString,
    max,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEP_ALIVE_AFTER_MS,
    statement_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + CLIENT_MARGIN_MS,
    ...(options === undefined || options === '' ? {} : { options }),
  };
}
