/**
 * Whether a sale has sold anything, as MySQL records it. Warm-up asks before it loads a fresh stock
 * (a sale with history must be recovered instead); recovery asks the same question.
 */
import type { Db } from '../platform/db/pool.js';
import { one } from '../platform/db/rows.js';

/** True when MySQL shows the sale sold something: an order or a dead letter. */
export async function hasSaleHistory(db: Db, activityId: string): Promise<boolean> {
  const row = await one<{ history: number }>(
    db.execute(
      `SELECT EXISTS(SELECT 1 FROM seckill_order WHERE activity_id = ?)
           OR EXISTS(SELECT 1 FROM seckill_dead_letter WHERE activity_id = ?) AS history`,
      [activityId, activityId],
    ),
  );
  return Number(row!.history) === 1;
}
