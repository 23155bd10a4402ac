/**
 * The console's alert banners' reads of MySQL (sale-alerts.ts): one sale's timed-out orders, open
 * dead letters and parked order events, each counted with when the oldest began where the row keeps
 * that time, from the sale's own ledger (a shadow sale's orders and events are in the shadow tables,
 * origin/orders/ledger.ts). Each uses an index on activity_id except the outbox's, which the
 * order-event routes scan the same way.
 */
import type { Ledger } from '../orders/ledger.js';
import type { Db } from '../platform/db/pool.js';

interface Counted {
  n: number | string;
  units?: number | string;
  since?: Date | null;
}

async function first(db: Db, sql: string, activityId: string): Promise<Counted | undefined> {
  const [rows] = await db.query(sql, [activityId]);
  return (rows as Counted[])[0];
}

/** Orders of the sale closed unpaid (status 2, TIMEOUT): how many, their units, the first closing. */
export const timedOutOrders = (db: Db, ledger: Ledger, activityId: string) =>
  first(
    db,
    `SELECT COUNT(*) AS n, COALESCE(SUM(quantity), 0) AS units, MIN(updated_at) AS since
       FROM ${ledger.order} WHERE activity_id = ? AND status = 2`,
    activityId,
  );

/** Open dead letters of the sale: how many, their units, the oldest. */
export const openDeadLetters = (db: Db, activityId: string) =>
  first(
    db,
    `SELECT COUNT(*) AS n, COALESCE(SUM(quantity), 0) AS units, MIN(created_at) AS since
       FROM seckill_dead_letter WHERE activity_id = ? AND status = 'open'`,
    activityId,
  );

/** Parked order events of the sale (status 2). */
export const parkedOrderEvents = (db: Db, ledger: Ledger, activityId: string) =>
  first(db, `SELECT COUNT(*) AS n FROM ${ledger.orderEvents} WHERE activity_id = ? AND status = 2`, activityId);
