/**
 * Whether the MySQL server answers, and what /metrics shows of it and of this process's pool: statements running, sessions
 * connected against max_connections, the server's slow-query count, and the pool's own use.
 */
import type { Db } from './pool.js';
import { rows } from './rows.js';

/** One round trip to the server (`SELECT 1`): start-up and /healthz ask whether MySQL answers. */
export async function pingMysql(db: Db): Promise<void> {
  await db.query('SELECT 1');
}

export interface ServerStatus {
  threadsRunning: number;
  threadsConnected: number;
  /** Statements slower than the server's long_query_time since it started (all clients). */
  slowQueries: number;
  maxConnections: number;
}

export async function readServerStatus(db: Db): Promise<ServerStatus> {
  const [status, limits] = await Promise.all([
    rows<{ Variable_name: string; Value: string }>(
      db.query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Threads_running', 'Threads_connected', 'Slow_queries')"),
    ),
    rows<{ maxConnections: string | number }>(db.query('SELECT @@max_connections AS maxConnections')),
  ]);
  const value = (name: string) => Number(status.find((r) => r.Variable_name === name)?.Value ?? NaN);
  return {
    threadsRunning: value('Threads_running'),
    threadsConnected: value('Threads_connected'),
    slowQueries: value('Slow_queries'),
    maxConnections: Number(limits[0]?.maxConnections ?? NaN),
  };
}

/** The pool's connections in use and idle, and its limit (mysql2 keeps them on the core pool). */
export function poolState(db: Db): { inUse: number; idle: number; limit: number } {
  const core = (
    db as unknown as {
      pool: {
        _allConnections: { length: number };
        _freeConnections: { length: number };
        config: { connectionLimit: number };
      };
    }
  ).pool;
  const all = core._allConnections.length;
  const idle = core._freeConnections.length;
  return { inUse: all - idle, idle, limit: core.config.connectionLimit };
}
