/**
 * The scheduled warm-up's statements on `seckill_activity` (schema/006: `warmup_status`,
 * `warmup_claimed_at`): which sales are due for a step, the conditional claim of a step, and its
 * outcome. The warm-up job (warmup-job.ts) and the admin warm-up (operations.ts) call them.
 */
import type { Db } from '../platform/db/pool.js';
import { affected, one, rows } from '../platform/db/rows.js';
import { ActivityState, WarmupStatus } from './sale-status.js';

/** The warm-up step the sale reached, or null for no such sale. */
export async function warmupStatusOf(db: Db, activityId: string): Promise<WarmupStatus | null> {
  const row = await one<{ warmup_status: WarmupStatus }>(
    db.execute('SELECT warmup_status FROM seckill_activity WHERE id = ?', [activityId]),
  );
  return row?.warmup_status ?? null;
}

/**
 * Sales not stopped nor ended whose warm-up is in step `from` (or stuck in `claimed` since before
 * `leaseExpired`), starting before `startsBefore` (and after `startsAfter` when given), at most `limit`.
 */
export async function salesDueForWarmup(
  db: Db,
  q: {
    from: WarmupStatus;
    claimed: WarmupStatus;
    now: Date;
    startsBefore: Date;
    startsAfter?: Date;
    leaseExpired: Date;
    limit: number;
  },
): Promise<string[]> {
  const notStarted = q.startsAfter !== undefined;
  const due = await rows<{ id: string }>(
    db.query(
      `SELECT id FROM seckill_activity
        WHERE state <> '${ActivityState.STOPPED}' AND ends_at > ? AND starts_at <= ? ${notStarted ? 'AND starts_at > ?' : ''}
          AND (warmup_status = ? OR (warmup_status = ? AND warmup_claimed_at < ?))
        ORDER BY starts_at LIMIT ${Number(q.limit)}`,
      [q.now, q.startsBefore, ...(notStarted ? [q.startsAfter] : []), q.from, q.claimed, q.leaseExpired],
    ),
  );
  return due.map((r) => String(r.id));
}

/** The conditional claim of a warm-up step: true for exactly one origin. */
export async function claimWarmupStep(
  db: Db,
  activityId: string,
  from: WarmupStatus,
  to: WarmupStatus,
  leaseExpired: Date,
): Promise<boolean> {
  const claimed = await affected(
    db.query(
      `UPDATE seckill_activity SET warmup_status = ?, warmup_claimed_at = ?
          WHERE id = ? AND (warmup_status = ? OR (warmup_status = ? AND warmup_claimed_at < ?))`,
      [to, new Date(), activityId, from, to, leaseExpired],
    ),
  );
  return claimed === 1;
}

/** verifying → verified | mismatch. */
export async function finishWarmupVerification(
  db: Db,
  activityId: string,
  status: typeof WarmupStatus.VERIFIED | typeof WarmupStatus.MISMATCH,
): Promise<void> {
  await db.query(
    `UPDATE seckill_activity SET warmup_status = ? WHERE id = ? AND warmup_status = '${WarmupStatus.VERIFYING}'`,
    [status, activityId],
  );
}

/** pending | warming → warmed (a warm-up ran, scheduled or by hand). */
export async function markWarmed(db: Db, activityId: string): Promise<void> {
  await db.execute(
    `UPDATE seckill_activity SET warmup_status = '${WarmupStatus.WARMED}' WHERE id = ? AND warmup_status IN ('${WarmupStatus.PENDING}', '${WarmupStatus.WARMING}')`,
    [activityId],
  );
}
