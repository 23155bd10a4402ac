/** MySQL connection pool and the one transaction helper every multi-statement write uses. */
import mysql from 'mysql2/promise';

export type Db = mysql.Pool;
export type Tx = mysql.PoolConnection;
/** The pool or one transaction's connection: a store function run alone or inside a caller's transaction. */
export type DbOrTx = Pick<Db, 'query' | 'execute'>;

/**
 * `preparedPerConnection`: how many prepared statements each connection keeps (least recently used
 * closed first). Settlement prepares one statement per batch size, so without a bound a pool could
 * approach the server's global `max_prepared_stmt_count` (16,382 by default) by itself.
 */
export function createPool(url: string, size: number, preparedPerConnection = 128): Db {
  const pool = mysql.createPool({
    uri: url,
    connectionLimit: size,
    maxPreparedStatements: preparedPerConnection,
    waitForConnections: true,
    // Ids are BIGINT UNSIGNED: keep them as strings, never lossy JS numbers.
    supportBigNumbers: true,
    bigNumberStrings: true,
    decimalNumbers: true,
    dateStrings: false,
    timezone: 'Z',
    enableKeepAlive: true,
    // No stack captured per query for errors' traces: an Error per statement is a stack walk per
    // query, paid even when nothing fails; errors keep their message and code.
    trace: false,
  });
  // Every session in UTC, as the driver (`timezone: 'Z'`): times the server makes (NOW(3), column
  // defaults, a settled order's expire_at) and times this process sends or reads are on one clock,
  // whatever the server's own time zone. Queued ahead of the connection's first statement.
  pool.on('connection', (connection) => {
    (connection as unknown as { query(sql: string, cb: (err: unknown) => void): void }).query(
      "SET time_zone = '+00:00'",
      () => {},
    );
  });
  return pool;
}

export type TransactionObserver = (seconds: number, committed: boolean) => void;
const observers = new WeakMap<Db, TransactionObserver>();

/** Tells `observer` the duration and outcome of every transaction run on `db` (metrics, slow log). */
export function observeTransactions(db: Db, observer: TransactionObserver): void {
  observers.set(db, observer);
}

/**
 * BEGIN; run `work`; COMMIT — or ROLLBACK and rethrow. No remote call belongs inside `work`.
 * `readCommitted`: this one transaction runs at READ COMMITTED, so its locking reads lock the rows
 * they return and no gaps (a queue's claim must not block the inserts that feed it).
 */
export async function inTransaction<T>(
  db: Db,
  work: (tx: Tx) => Promise<T>,
  opts: { readCommitted?: boolean } = {},
): Promise<T> {
  const started = performance.now();
  let committed = false;
  const tx = await db.getConnection();
  try {
    // Without SESSION it applies to the next transaction only: the pooled connection keeps its default.
    if (opts.readCommitted) await tx.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    await tx.beginTransaction();
    const result = await work(tx);
    await tx.commit();
    committed = true;
    return result;
  } catch (err) {
    await tx.rollback().catch(() => undefined);
    throw err;
  } finally {
    tx.release();
    observers.get(db)?.((performance.now() - started) / 1000, committed);
  }
}

/**
 * A read-only transaction on one consistent snapshot (InnoDB): every SELECT in `work` sees the
 * database as it stood at START, whatever the server's or the session's default isolation (at
 * READ COMMITTED each statement would read a newer state: a refill committed between two SELECTs
 * would show in one figure and not in the other). Explicitly REPEATABLE READ for this transaction
 * only; `WITH CONSISTENT SNAPSHOT` opens the read view at START, not at the first SELECT.
 */
export async function inConsistentSnapshot<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  const started = performance.now();
  let committed = false;
  const tx = await db.getConnection();
  try {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    await tx.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
    const result = await work(tx);
    await tx.query('COMMIT');
    committed = true;
    return result;
  } catch (err) {
    await tx.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    tx.release();
    observers.get(db)?.((performance.now() - started) / 1000, committed);
  }
}

export function isDuplicateKey(err: unknown, key?: string): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === 'ER_DUP_ENTRY' && (key === undefined || (e.message ?? '').includes(key));
}
