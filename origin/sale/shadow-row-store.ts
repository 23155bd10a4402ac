/**
 * Every statement on a shadow sale's rows at its end (docs/rehearsal.md): its cleanup removes every trace of its buyers —
 * every row of its ledger (the shadow tables: orders, stock log, refunds, refill outbox, order-event
 * outbox; origin/orders/ledger.ts), its dead letters and tranche releases, a lottery's draw record and
 * published entrant list (the seed included), and its Redis keys (deleted,
 * not left to expire) with its registry entry. What stays is the sale's own row (marked shadow,
 * stopped) and its stock row, so the console and the checklist can still say what happened.
 * A real sale never comes here: the caller asks `ledgerOf(sale).shadow` first.
 */
import type { Db } from '../platform/db/pool.js';
import { affected, one } from '../platform/db/rows.js';
import { ledgerOf } from '../orders/ledger.js';
import type { SaleRef } from '../orders/order-store.js';

/** The tables a shadow sale leaves rows in, keyed by activity_id. */
function shadowTables(sale: SaleRef): string[] {
  const ledger = ledgerOf(sale);
  if (!ledger.shadow) throw new Error(`activity ${sale.activityId} is not a shadow sale`);
  return [
    ledger.order,
    ledger.stockLog,
    ledger.refund,
    ledger.refillOutbox,
    ledger.orderEvents,
    'seckill_dead_letter',
    'seckill_stock_release',
    'seckill_draw_entrant',
    'seckill_draw',
  ];
}

/** Deletes the shadow sale's rows; returns how many went, per table. */
export async function removeShadowRows(db: Db, sale: SaleRef): Promise<Record<string, number>> {
  const removed: Record<string, number> = {};
  for (const table of shadowTables(sale))
    removed[table] = await affected(db.execute(`DELETE FROM ${table} WHERE activity_id = ?`, [sale.activityId]));
  return removed;
}

/** Rows the shadow sale still has, per table (the checklist's item). */
export async function shadowRowsLeft(db: Db, sale: SaleRef): Promise<Record<string, number>> {
  const left: Record<string, number> = {};
  for (const table of shadowTables(sale)) {
    const row = await one<{ n: number }>(
      db.execute(`SELECT COUNT(*) AS n FROM ${table} WHERE activity_id = ?`, [sale.activityId]),
    );
    left[table] = Number(row?.n ?? 0);
  }
  return left;
}
