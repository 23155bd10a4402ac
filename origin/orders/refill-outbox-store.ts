/**
 * Every statement on `stock_sync_outbox` (schema/001; a shadow sale's in its ledger's table, ledger.ts): the refills of timed-out orders waiting to
 * be put back in Redis, their row type and their status. Functions take the pool or the caller's
 * transaction first (the timeout job queues its refills in its own transaction).
 */
import type { DbOrTx, Tx } from '../platform/db/pool.js';
import { one, rows } from '../platform/db/rows.js';
import { ledgerOf, type Ledger } from './ledger.js';
import type { SaleIds, SaleRef } from './order-store.js';
import { StockChange } from './stock-row-store.js';

/** `stock_sync_outbox.status`: a refill waiting for Redis, or applied. */
export const OutboxStatus = { PENDING: 0, DONE: 1 } as const;
export type OutboxStatus = (typeof OutboxStatus)[keyof typeof OutboxStatus];

/** A claimed refill row. */
export interface RefillOutboxRow {
  id: string;
  activity_id: string;
  sku_id: string;
  reservation_id: string;
  quantity: number;
}

/** Queues one REFILL per timed-out reservation (of the ledger's orders). */
export async function queueRefills(
  tx: Tx,
  ledger: Ledger,
  entries: { activityId: string; skuId: string; reservationId: string; quantity: number }[],
): Promise<void> {
  await tx.query(
    `INSERT INTO ${ledger.refillOutbox} (activity_id, sku_id, reservation_id, quantity, kind) VALUES ${entries.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
    entries.flatMap((e) => [e.activityId, e.skuId, e.reservationId, e.quantity, StockChange.REFILL]),
  );
}

/**
 * Claims pending rows not under someone else's lease (`updated_at` + `leaseMs`), at most `batch`,
 * and counts the attempt: `FOR UPDATE SKIP LOCKED` inside the caller's transaction.
 */
export async function claimRefills(tx: Tx, ledger: Ledger, batch: number, leaseMs: number): Promise<RefillOutboxRow[]> {
  const claimed = await rows<RefillOutboxRow>(
    tx.query(
      `SELECT id, activity_id, sku_id, reservation_id, quantity FROM ${ledger.refillOutbox}
            WHERE status = ${OutboxStatus.PENDING} AND (attempts = 0 OR updated_at < NOW(3) - INTERVAL ? SECOND)
            ORDER BY id LIMIT ${Number(batch)} FOR UPDATE SKIP LOCKED`,
      [leaseMs / 1000],
    ),
  );
  if (claimed.length === 0) return [];
  await tx.query(
    `UPDATE ${ledger.refillOutbox} SET attempts = attempts + 1, updated_at = NOW(3) WHERE id IN (${claimed
      .map(() => '?')
      .join(', ')})`,
    claimed.map((r) => r.id),
  );
  return claimed;
}

/** PENDING → DONE. */
export async function markRefillDone(db: DbOrTx, ledger: Ledger, id: string): Promise<void> {
  await db.execute(
    `UPDATE ${ledger.refillOutbox} SET status = ${OutboxStatus.DONE}, updated_at = NOW(3)
        WHERE id = ? AND status = ${OutboxStatus.PENDING}`,
    [id],
  );
}

/** The sale's refill rows, every status (recovery). */
export async function refillsOfSale(
  db: DbOrTx,
  sale: SaleIds,
): Promise<{ reservation_id: string; quantity: number; status: number }[]> {
  return rows(
    db.execute(
      `SELECT reservation_id, quantity, status FROM ${ledgerOf(sale).refillOutbox} WHERE activity_id = ? AND sku_id = ?`,
      [sale.activityId, sale.skuId],
    ),
  );
}

/**
 * Every refill the sale's stock log queued, pending or done, found through the log (the table
 * indexed by activity); the join leaves out a refill whose outbox row is missing.
 */
export async function loggedRefills(
  db: DbOrTx,
  sale: SaleIds,
): Promise<{ reservation_id: string; quantity: number }[]> {
  const ledger = ledgerOf(sale);
  return rows(
    db.execute(
      `SELECT o.reservation_id, o.quantity
           FROM ${ledger.stockLog} l
           JOIN ${ledger.refillOutbox} o ON o.reservation_id = l.biz_id AND o.kind = '${StockChange.REFILL}'
          WHERE l.activity_id = ? AND l.sku_id = ? AND l.change_type = '${StockChange.REFILL}'
            AND o.activity_id = l.activity_id AND o.sku_id = l.sku_id`,
      [sale.activityId, sale.skuId],
    ),
  );
}

/** How many of the sale's refills have the status. */
export async function refillCount(db: DbOrTx, sale: SaleRef, status: OutboxStatus): Promise<number> {
  const row = await one<{ n: number }>(
    db.execute(
      `SELECT COUNT(*) AS n FROM ${ledgerOf(sale).refillOutbox} WHERE activity_id = ? AND status = ${Number(status)}`,
      [sale.activityId],
    ),
  );
  return Number(row?.n ?? 0);
}
