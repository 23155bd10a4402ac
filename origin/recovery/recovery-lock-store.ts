/**
 * The statements of the recovery lock (recovery-lock.ts): MySQL's `GET_LOCK` / `RELEASE_LOCK` on one
 * dedicated connection. The name is per database and activity (locks are server-wide; stacks sharing
 * a MariaDB never block each other), hashed to fit the 64-character limit.
 */
import type { Tx } from '../platform/db/pool.js';
import { one } from '../platform/db/rows.js';

const LOCK_NAME = "CONCAT('seckill_recover:', SHA1(CONCAT(COALESCE(DATABASE(), ''), '/', ?)))";

/** Waits at most `waitMs` for the sale's lock on `conn`; true when got. */
export async function getRecoveryLock(conn: Tx, activityId: string, waitMs: number): Promise<boolean> {
  const got = await one<{ got: number | null }>(
    conn.query(`SELECT GET_LOCK(${LOCK_NAME}, ?) AS got`, [activityId, waitMs / 1000]),
  );
  return Number(got?.got) === 1;
}

/** Releases the sale's lock held by `conn`. */
export async function releaseRecoveryLock(conn: Tx, activityId: string): Promise<void> {
  await conn.query(`DO RELEASE_LOCK(${LOCK_NAME})`, [activityId]);
}
