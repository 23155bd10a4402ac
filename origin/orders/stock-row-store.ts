/**
 * Every statement on `seckill_stock` (a sale's units in MySQL: initial, available, held back) and
 * `seckill_stock_log` (one row per reservation and change; a shadow sale's in its ledger's table,
 * origin/orders/ledger.ts) (schema/001, 006, 011). Functions take the
 * pool or the caller's transaction first, so settlement's and the timeout job's writes stay in
 * their one transaction.
 */
import type { DbOrTx, Tx } from '../platform/db/pool.js';
import { affected, one } from '../platform/db/rows.js';
import { ledgerOf, type Ledger } from './ledger.js';
import { saleLiterals, type SaleIds, type SaleRef } from './order-store.js';

/** `seckill_stock_log.change_type` (and `stock_sync_outbox.kind`): why units moved. */
export const StockChange = { DEDUCT: 'DEDUCT', REFILL: 'REFILL' } as const;
export type StockChange = (typeof StockChange)[keyof typeof StockChange];

/** The sale's available units, or undefined without a stock row; `lock` takes the row until COMMIT. */
export async function availableUnits(
  db: DbOrTx,
  sale: SaleIds,
  opts: { lock?: boolean } = {},
): Promise<number | undefined> {
  const row = await one<{ available: number }>(
    db.execute(
      `SELECT available FROM seckill_stock WHERE activity_id = ? AND sku_id = ?${opts.lock ? ' FOR UPDATE' : ''}`,
      [sale.activityId, sale.skuId],
    ),
  );
  return row ? Number(row.available) : undefined;
}

/** The sale's stock row figures. */
export async function stockFigures(
  db: DbOrTx,
  sale: SaleIds,
): Promise<{ initial_stock: number; available: number; held_back: number } | undefined> {
  return one(
    db.execute('SELECT initial_stock, available, held_back FROM seckill_stock WHERE activity_id = ? AND sku_id = ?', [
      sale.activityId,
      sale.skuId,
    ]),
  );
}

/** `available -= units` when at least `units` are left; returns the rows changed (1, or 0 when short). */
export async function deductAvailable(tx: Tx, sale: SaleIds, units: number): Promise<number> {
  return affected(
    tx.execute(
      `UPDATE seckill_stock SET available = available - ?, updated_at = CURRENT_TIMESTAMP(3)
        WHERE activity_id = ? AND sku_id = ? AND available >= ?`,
      [units, sale.activityId, sale.skuId, units],
    ),
  );
}

/** `available += units` (a timeout's units back in MySQL). */
export async function addAvailable(tx: Tx, sale: SaleIds, units: number): Promise<void> {
  await tx.execute(
    `UPDATE seckill_stock SET available = available + ?, updated_at = CURRENT_TIMESTAMP(3)
            WHERE activity_id = ? AND sku_id = ?`,
    [units, sale.activityId, sale.skuId],
  );
}

const LOG_COLUMNS = '(activity_id, sku_id, biz_id, change_type, quantity)';

/**
 * One DEDUCT log row per reservation of one sale, prepared, the sale's ids as literals (as the
 * orders' INSERT, order-store.ts). Throws on a unique key (uk_biz_change).
 */
export async function logDeductions(
  tx: Tx,
  sale: SaleIds,
  entries: { reservationId: string; quantity: number }[],
): Promise<void> {
  const lit = saleLiterals(sale);
  await tx.execute(
    `INSERT INTO ${ledgerOf(sale).stockLog} ${LOG_COLUMNS} VALUES ${entries.map(() => `(${lit.activity}, ${lit.sku}, ?, '${StockChange.DEDUCT}', ?)`).join(', ')}`,
    entries.flatMap((e) => [e.reservationId, e.quantity]),
  );
}

/** One REFILL log row per timed-out reservation (of the ledger's orders). */
export async function logRefills(
  tx: Tx,
  ledger: Ledger,
  entries: { activityId: string; skuId: string; reservationId: string; quantity: number }[],
): Promise<void> {
  await tx.query(
    `INSERT INTO ${ledger.stockLog} (activity_id, sku_id, biz_id, quantity, change_type) VALUES ${entries.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
    entries.flatMap((e) => [e.activityId, e.skuId, e.reservationId, e.quantity, StockChange.REFILL]),
  );
}

/** Units the sale's log shows deducted and refilled. */
export async function stockLogTotals(db: DbOrTx, sale: SaleIds): Promise<{ deducted: number; refilled: number }> {
  const row = (await one<{ deducted: number; refilled: number }>(
    db.execute(
      `SELECT COALESCE(SUM(CASE WHEN change_type = '${StockChange.DEDUCT}' THEN quantity END), 0) AS deducted,
                COALESCE(SUM(CASE WHEN change_type = '${StockChange.REFILL}' THEN quantity END), 0) AS refilled
           FROM ${ledgerOf(sale).stockLog} WHERE activity_id = ? AND sku_id = ?`,
      [sale.activityId, sale.skuId],
    ),
  ))!;
  return { deducted: Number(row.deducted), refilled: Number(row.refilled) };
}

/** How many refills the sale's log holds. */
export async function refillLogCount(db: DbOrTx, sale: SaleRef): Promise<number> {
  const row = await one<{ n: number }>(
    db.execute(
      `SELECT COUNT(*) AS n FROM ${ledgerOf(sale).stockLog} WHERE activity_id = ? AND change_type = '${StockChange.REFILL}'`,
      [sale.activityId],
    ),
  );
  return Number(row?.n ?? 0);
}

/** The sale's held-back units, locked until COMMIT (a release reduces them). */
export async function lockHeldBack(tx: Tx, sale: SaleIds): Promise<number> {
  const row = (await one<{ held_back: number }>(
    tx.execute('SELECT held_back FROM seckill_stock WHERE activity_id = ? AND sku_id = ? FOR UPDATE', [
      sale.activityId,
      sale.skuId,
    ]),
  ))!;
  return Number(row.held_back);
}

/** `held_back -= units` (a tranche released). */
export async function reduceHeldBack(tx: Tx, sale: SaleIds, units: number): Promise<void> {
  await tx.execute('UPDATE seckill_stock SET held_back = held_back - ? WHERE activity_id = ? AND sku_id = ?', [
    units,
    sale.activityId,
    sale.skuId,
  ]);
}

/** `available += units` for a tranche Redis has now (no updated_at change, as before). */
export async function addReleasedUnits(tx: Tx, sale: SaleIds, units: number): Promise<void> {
  await tx.execute('UPDATE seckill_stock SET available = available + ? WHERE activity_id = ? AND sku_id = ?', [
    units,
    sale.activityId,
    sale.skuId,
  ]);
}

/** The activity's held-back units (every SKU). */
export async function heldBackOfActivity(db: DbOrTx, activityId: string): Promise<number> {
  const row = await one<{ held_back: number }>(
    db.execute('SELECT COALESCE(SUM(held_back), 0) AS held_back FROM seckill_stock WHERE activity_id = ?', [
      activityId,
    ]),
  );
  return Number(row?.held_back ?? 0);
}
