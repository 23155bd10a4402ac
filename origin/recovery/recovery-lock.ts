/**
 * One recovery of a sale at a time, across every origin process that shares the MySQL. Several
 * origins share one Redis, and every one's failover watch sees the same failover, so without this two
 * of them would rebuild the same sale at once (one dropping the stock the other just proved).
 *
 * The lock is MySQL's (`GET_LOCK`), not Redis's: Redis is what just failed. One dedicated connection
 * holds it for the whole recovery; it is released on the way out, and MySQL releases it by itself
 * when that connection dies with its process. The statements: recovery-lock-store.ts.
 */
import { ContractError } from '../../contract/errors.js';
import type { Db } from '../platform/db/pool.js';
import { getRecoveryLock, releaseRecoveryLock } from './recovery-lock-store.js';

/**
 * Runs `work` while holding the sale's recovery lock, waiting at most `waitMs` (RECOVER_LOCK_WAIT_MS)
 * for it. Not got in time → 503 `busy`: another process is still recovering the sale.
 */
export async function withRecoveryLock<T>(
  db: Db,
  activityId: string,
  waitMs: number,
  work: () => Promise<T>,
): Promise<T> {
  const conn = await db.getConnection();
  let held = false;
  let healthy = true;
  try {
    held = await getRecoveryLock(conn, activityId, waitMs).catch((err: unknown) => {
      healthy = false;
      throw err;
    });
    if (!held)
      throw new ContractError(
        'busy',
        `another origin process is recovering sale ${activityId} (waited ${waitMs} ms for it); try again`,
        { retryAfter: 1 },
      );
    return await work();
  } finally {
    // A connection that could not say RELEASE_LOCK may still hold it: end its session instead of pooling it.
    if (held)
      healthy = await releaseRecoveryLock(conn, activityId).then(
        () => true,
        () => false,
      );
    if (healthy) conn.release();
    else conn.destroy();
  }
}
