/**
 * Every statement on `seckill_stock_release` (schema/006): one row per release of held-back units
 * (docs/design.md §10), its row type and its status. Functions take the pool or the caller's
 * transaction first (a release reduces `held_back` and writes its row in one transaction).
 */
import type { DbOrTx, Tx } from '../platform/db/pool.js';
import { affected, insertId, one, rows } from '../platform/db/rows.js';
import type { SaleIds } from '../orders/order-store.js';

/** `seckill_stock_release.status`: committed in MySQL (held_back already reduced) but not in Redis, or applied. */
export const StockReleaseStatus = { PENDING: 0, APPLIED: 1 } as const;
export type StockReleaseStatus = (typeof StockReleaseStatus)[keyof typeof StockReleaseStatus];

export interface ReleaseRow {
  id: string;
  activity_id: string;
  sku_id: string;
  units: number;
}

/** Writes a release row with attempts = 1 (the caller applies it at once); returns its id. */
export async function insertRelease(tx: Tx, sale: SaleIds, units: number, actor: string): Promise<string> {
  return insertId(
    tx.execute(
      'INSERT INTO seckill_stock_release (activity_id, sku_id, units, actor, attempts) VALUES (?, ?, ?, ?, 1)',
      [sale.activityId, sale.skuId, units, actor],
    ),
  );
}

/** PENDING → APPLIED; returns 1 when this call marked it. */
export async function markReleaseApplied(tx: Tx, releaseId: string): Promise<number> {
  return affected(
    tx.execute(
      `UPDATE seckill_stock_release SET status = ${StockReleaseStatus.APPLIED}, updated_at = NOW(3)
          WHERE id = ? AND status = ${StockReleaseStatus.PENDING}`,
      [releaseId],
    ),
  );
}

/** Units of the activity's releases, pending and applied. */
export async function releaseUnitTotals(db: DbOrTx, activityId: string): Promise<{ pending: number; applied: number }> {
  const { PENDING, APPLIED } = StockReleaseStatus;
  const row = (await one<{ pending: number; applied: number }>(
    db.execute(
      `SELECT (SELECT COALESCE(SUM(units), 0) FROM seckill_stock_release WHERE activity_id = ? AND status = ${PENDING}) AS pending,
              (SELECT COALESCE(SUM(units), 0) FROM seckill_stock_release WHERE activity_id = ? AND status = ${APPLIED}) AS applied`,
      [activityId, activityId],
    ),
  ))!;
  return { pending: Number(row.pending), applied: Number(row.applied) };
}

/**
 * Claims pending releases not under someone else's lease (`updated_at` + `leaseMs`), at most
 * `batch`, and counts the attempt: `FOR UPDATE SKIP LOCKED` inside the caller's transaction.
 */
export async function claimReleases(tx: Tx, batch: number, leaseMs: number): Promise<ReleaseRow[]> {
  const due = await rows<ReleaseRow>(
    tx.query(
      `SELECT id, activity_id, sku_id, units FROM seckill_stock_release
            WHERE status = ${StockReleaseStatus.PENDING} AND (attempts = 0 OR updated_at < NOW(3) - INTERVAL ? SECOND)
            ORDER BY id LIMIT ${Number(batch)} FOR UPDATE SKIP LOCKED`,
      [leaseMs / 1000],
    ),
  );
  if (due.length > 0)
    await tx.query(
      `UPDATE seckill_stock_release SET attempts = attempts + 1, updated_at = NOW(3) WHERE id IN (${due
        .map(() => '?')
        .join(', ')})`,
      due.map((r) => r.id),
    );
  return due;
}

/** Every release of the sale (reconciliation). */
export async function releasesOfSale(
  db: DbOrTx,
  sale: SaleIds,
): Promise<{ id: string; units: number; status: number }[]> {
  return rows(
    db.execute('SELECT id, units, status FROM seckill_stock_release WHERE activity_id = ? AND sku_id = ?', [
      sale.activityId,
      sale.skuId,
    ]),
  );
}

/** The sale's applied releases (recovery). */
export async function appliedReleasesOfSale(db: DbOrTx, sale: SaleIds): Promise<{ id: string; units: number }[]> {
  return rows(
    db.execute(
      `SELECT id, units FROM seckill_stock_release
          WHERE activity_id = ? AND sku_id = ? AND status = ${StockReleaseStatus.APPLIED}`,
      [sale.activityId, sale.skuId],
    ),
  );
}
