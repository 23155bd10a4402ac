/**
 * Settles reservations into MySQL: the transaction of DESIGN §6, for a batch of reservations of one
 * activity at a time, with exactly the per-reservation semantics of the single-message version:
 *   order exists for the reservation?            → duplicate delivery, nothing written
 *   dead-lettered meanwhile?                      → the dead letter owns it, nothing written
 *   fewer units left than it needs?              → insufficient stock, nothing written for it
 *   INSERT order (same user's OTHER reservation)  → surplus, nothing written for it
 *   INSERT stock log DEDUCT
 * then one conditional `UPDATE seckill_stock ... WHERE available >= Σq` for the batch (the row is
 * locked at the start, so each reservation was checked against what was left in turn) and COMMIT.
 * The caller XACKs only after this returns. One commit per batch instead of one per order.
 */
import { createHash } from 'node:crypto';
import { inTransaction, isDuplicateKey, type Db } from '../db/pool.js';
import type { ReservationEvent } from './event.js';

export type SettleOutcome = 'settled' | 'duplicate' | 'surplus' | 'dead_lettered' | 'insufficient_stock';

export interface SettleTarget {
  activityId: string;
  skuId: string;
  paymentTimeoutSeconds: number;
}

/** The order's request_id: unique across all sales, so it names the sale and the user too. */
export function storedRequestId(target: SettleTarget, e: ReservationEvent): string {
  return `${target.activityId}:${e.userId}:${e.requestId}`;
}

/** Deterministic, so a replayed settlement could never mint a second order number. */
export function orderNoFor(reservationId: string): string {
  return createHash('sha256').update(reservationId).digest('hex').slice(0, 24).toUpperCase();
}

/** One reservation: a batch of one, so both paths are the same code and the same transaction. */
export async function settleReservation(db: Db, target: SettleTarget, e: ReservationEvent): Promise<SettleOutcome> {
  return (await settleBatch(db, target, [e])).get(e.reservationId)!;
}

const INSERT_ORDER = `INSERT INTO seckill_order
  (order_no, reservation_id, request_id, activity_id, sku_id, user_id, quantity, status, expire_at, trace_id)
  VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`;

/**
 * Settles many reservations of one activity in one transaction. Returns each reservation's outcome.
 * Throws (everything rolled back) on an unexpected error: the caller then settles one by one.
 */
export async function settleBatch(
  db: Db,
  target: SettleTarget,
  events: ReservationEvent[],
): Promise<Map<string, SettleOutcome>> {
  const outcomes = new Map<string, SettleOutcome>();
  if (events.length === 0) return outcomes;
  const ids = events.map((e) => e.reservationId);
  const marks = ids.map(() => '?').join(',');
  await inTransaction(db, async (tx) => {
    const [existing] = (await tx.query(
      `SELECT reservation_id FROM seckill_order WHERE reservation_id IN (${marks})`,
      ids,
    )) as any;
    for (const r of existing) outcomes.set(r.reservation_id, 'duplicate');
    // Locks against concurrent dead-lettering of these reservations (see dead-letter.ts).
    const [dead] = (await tx.query(
      `SELECT reservation_id FROM seckill_dead_letter WHERE reservation_id IN (${marks}) AND status <> 'retried' FOR UPDATE`,
      ids,
    )) as any;
    for (const r of dead) if (!outcomes.has(r.reservation_id)) outcomes.set(r.reservation_id, 'dead_lettered');

    const [[stock]] = (await tx.execute(
      'SELECT available FROM seckill_stock WHERE activity_id = ? AND sku_id = ? FOR UPDATE',
      [target.activityId, target.skuId],
    )) as any;
    let left = stock ? Number(stock.available) : 0;
    let deducted = 0;
    const expireAt = new Date(Date.now() + target.paymentTimeoutSeconds * 1000);
    for (const e of events) {
      if (outcomes.has(e.reservationId)) continue;
      if (left < e.quantity) {
        outcomes.set(e.reservationId, 'insufficient_stock');
        continue;
      }
      try {
        await tx.execute(INSERT_ORDER, [
          orderNoFor(e.reservationId),
          e.reservationId,
          storedRequestId(target, e),
          target.activityId,
          target.skuId,
          e.userId,
          e.quantity,
          expireAt,
          e.traceId || null,
        ]);
      } catch (err) {
        // A failed INSERT rolls back only itself; the transaction goes on.
        if (!isDuplicateKey(err)) throw err;
        const [mine] = (await tx.execute('SELECT id FROM seckill_order WHERE reservation_id = ? FOR UPDATE', [
          e.reservationId,
        ])) as any;
        outcomes.set(e.reservationId, mine.length > 0 ? 'duplicate' : 'surplus');
        continue;
      }
      await tx.execute(
        "INSERT INTO seckill_stock_log (activity_id, sku_id, biz_id, change_type, quantity) VALUES (?, ?, ?, 'DEDUCT', ?)",
        [target.activityId, target.skuId, e.reservationId, e.quantity],
      );
      left -= e.quantity;
      deducted += e.quantity;
      outcomes.set(e.reservationId, 'settled');
    }
    if (deducted > 0) {
      const [update] = (await tx.execute(
        `UPDATE seckill_stock SET available = available - ?, updated_at = CURRENT_TIMESTAMP(3)
          WHERE activity_id = ? AND sku_id = ? AND available >= ?`,
        [deducted, target.activityId, target.skuId, deducted],
      )) as any;
      // The row is locked by this transaction, so this cannot happen; if it does, nothing commits.
      if (update.affectedRows !== 1) throw new Error('stock changed under a locked row');
    }
  });
  return outcomes;
}
