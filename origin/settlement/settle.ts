/**
 * Settles reservations into MySQL: the transaction of DESIGN §6, for a batch of reservations of one
 * activity at a time, with exactly the per-reservation semantics of the single-message version:
 *   order exists for the reservation?               → duplicate delivery, nothing written
 *   dead-lettered meanwhile?                         → the dead letter owns it, nothing written
 *   the same user already has an order (another one) → surplus, nothing written for it
 *   fewer units left than it needs?                 → insufficient stock, nothing written for it
 *   else: INSERT order, INSERT stock log DEDUCT
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

const ORDER_COLUMNS =
  '(order_no, reservation_id, request_id, activity_id, sku_id, user_id, quantity, status, expire_at, trace_id)';
const LOG_COLUMNS = '(activity_id, sku_id, biz_id, change_type, quantity)';

/**
 * Settles many reservations of one activity in one transaction. Returns each reservation's outcome.
 * Every rule is decided from reads made under the stock row's lock, then the winners are written
 * with one multi-row INSERT of orders, one of stock-log rows and one conditional stock UPDATE — a
 * handful of round trips per batch instead of two per reservation. Throws (everything rolled back)
 * on an unexpected error: the caller then settles one by one, where a duplicate key is classified.
 */
export async function settleBatch(
  db: Db,
  target: SettleTarget,
  events: ReservationEvent[],
): Promise<Map<string, SettleOutcome>> {
  const outcomes = new Map<string, SettleOutcome>();
  if (events.length === 0) return outcomes;
  const { activityId, skuId } = target;
  const ids = events.map((e) => e.reservationId);
  const marks = (n: number) => Array.from({ length: n }, () => '?').join(',');
  await inTransaction(db, async (tx) => {
    // The stock row first: batches of this activity take turns, and every read below (the read view
    // starts after the lock) sees what the batches before committed.
    const [[stock]] = (await tx.execute(
      'SELECT available FROM seckill_stock WHERE activity_id = ? AND sku_id = ? FOR UPDATE',
      [activityId, skuId],
    )) as any;
    const [existing] = (await tx.query(
      `SELECT reservation_id FROM seckill_order WHERE reservation_id IN (${marks(ids.length)})`,
      ids,
    )) as any;
    for (const r of existing) outcomes.set(r.reservation_id, 'duplicate');
    // Locks against concurrent dead-lettering of these reservations (see dead-letter.ts).
    const [dead] = (await tx.query(
      `SELECT reservation_id FROM seckill_dead_letter WHERE reservation_id IN (${marks(ids.length)}) AND status <> 'retried' FOR UPDATE`,
      ids,
    )) as any;
    for (const r of dead) if (!outcomes.has(r.reservation_id)) outcomes.set(r.reservation_id, 'dead_lettered');
    // A user who already has an order in this sale: another reservation of theirs is surplus.
    const users = [...new Set(events.filter((e) => !outcomes.has(e.reservationId)).map((e) => e.userId))];
    const ordered = new Set<string>();
    if (users.length > 0) {
      const [owners] = (await tx.query(
        `SELECT user_id FROM seckill_order WHERE activity_id = ? AND sku_id = ? AND user_id IN (${marks(users.length)})`,
        [activityId, skuId, ...users],
      )) as any;
      for (const o of owners) ordered.add(String(o.user_id));
    }

    let left = stock ? Number(stock.available) : 0;
    const winners: ReservationEvent[] = [];
    for (const e of events) {
      if (outcomes.has(e.reservationId)) continue;
      if (ordered.has(e.userId)) outcomes.set(e.reservationId, 'surplus');
      else if (left < e.quantity) outcomes.set(e.reservationId, 'insufficient_stock');
      else {
        left -= e.quantity;
        ordered.add(e.userId);
        winners.push(e);
      }
    }
    if (winners.length === 0) return;

    const expireAt = new Date(Date.now() + target.paymentTimeoutSeconds * 1000);
    try {
      await tx.query(
        `INSERT INTO seckill_order ${ORDER_COLUMNS} VALUES ${winners.map(() => '(?, ?, ?, ?, ?, ?, ?, 0, ?, ?)').join(', ')}`,
        winners.flatMap((e) => [
          orderNoFor(e.reservationId),
          e.reservationId,
          storedRequestId(target, e),
          activityId,
          skuId,
          e.userId,
          e.quantity,
          expireAt,
          e.traceId || null,
        ]),
      );
    } catch (err) {
      // Not foreseen by the reads above (an order written without the stock lock). Alone, classify
      // it; in a batch, give up the batch so the caller settles one by one.
      if (!isDuplicateKey(err) || winners.length > 1) throw err;
      const e = winners[0]!;
      const [mine] = (await tx.execute('SELECT id FROM seckill_order WHERE reservation_id = ? FOR UPDATE', [
        e.reservationId,
      ])) as any;
      outcomes.set(e.reservationId, mine.length > 0 ? 'duplicate' : 'surplus');
      return;
    }
    await tx.query(
      `INSERT INTO seckill_stock_log ${LOG_COLUMNS} VALUES ${winners.map(() => "(?, ?, ?, 'DEDUCT', ?)").join(', ')}`,
      winners.flatMap((e) => [activityId, skuId, e.reservationId, e.quantity]),
    );
    const deducted = winners.reduce((sum, e) => sum + e.quantity, 0);
    const [update] = (await tx.execute(
      `UPDATE seckill_stock SET available = available - ?, updated_at = CURRENT_TIMESTAMP(3)
        WHERE activity_id = ? AND sku_id = ? AND available >= ?`,
      [deducted, activityId, skuId, deducted],
    )) as any;
    // The row is locked by this transaction, so this cannot happen; if it does, nothing commits.
    if (update.affectedRows !== 1) throw new Error('stock changed under a locked row');
    for (const e of winners) outcomes.set(e.reservationId, 'settled');
  });
  return outcomes;
}
