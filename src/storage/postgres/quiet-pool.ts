/**
 * A pg pool whose lost connections are never an uncaught 'error' event. The pool listens on its
 * idle clients only; a client in use that loses its connection (a terminated backend, a failover)
 * fails its query, which reaches the caller, and also emits 'error', which with no listener
 * would be an uncaught exception.
 */
import pg from 'pg';

const ignore = (): void => undefined;

export function quietPool(options: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(options);
  pool.on('error', ignore);
  pool.on('connect', (client) => client.on('error', ignore));
  return pool;
}
