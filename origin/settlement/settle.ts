/**
 * Settles reservations into MySQL. One reservation — exactly the transaction of DESIGN §6:
 *   order exists for reservation? → duplicate delivery
 *   INSERT order (same user's OTHER reservation → surplus)
 *   dead-lettered meanwhile? → stop (the dead letter owns it)
 *   UPDATE stock ... WHERE available >= q (0 rows → insufficient, roll back)
 *   INSERT stock log DEDUCT
 * COMMIT; the caller XACKs only after this returns.
 *
 * A batch (`settleBatch`) keeps exactly these per-reservation semantics in one transaction: the
 * stock row is locked once, each reservation is checked against what is left in turn, and the
 * stock UPDATE (still conditional) carries the sum. One commit per batch instead of one per order.
 */
import { createHash } from 'node:crypto';
import { inTransaction, isDuplicateKey, Rollback, type Db } from '../db/pool.js';
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

export async function settleReservation(db: Db, target: SettleTarget, e: ReservationEvent): Promise<SettleOutcome> {
  try {
    return await inTransaction(db, async (tx) => {
      const [existing] = (await tx.execute('SELECT id FROM seckill_order WHERE reservation_id = ?', [
        e.reservationId,
      ])) as any;
      if (existing.length > 0) return 'duplicate';

      try {
        await tx.execute(
          `INSERT INTO seckill_order (order_no, reservation_id, request_id, activity_id, sku_id, user_id, quantity, status, expire_at, trace_id)
           VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
          [
            orderNoFor(e.reservationId),
            e.reservationId,
            storedRequestId(target, e),
            target.activityId,
            target.skuId,
            e.userId,
            e.quantity,
            new Date(Date.now() + target.paymentTimeoutSeconds * 1000),
            e.traceId || null,
          ],
        );
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        // MySQL names only the first unique key violated, so ask directly: is it this reservation
        // (a concurrent delivery committed first) or the same user's other one (surplus)? A locking
        // read sees the latest commit, not this transaction's snapshot.
        const [mine] = (await tx.execute('SELECT id FROM seckill_order WHERE reservation_id = ? FOR UPDATE', [
          e.reservationId,
        ])) as any;
        throw new Rollback<SettleOutcome>(mine.length > 0 ? 'duplicate' : 'surplus');
      }

      // Locks against a concurrent dead-lettering of the same reservation (see dead-letter.ts).
      const [dead] = (await tx.execute(
        "SELECT id FROM seckill_dead_letter WHERE reservation_id = ? AND status <> 'retried' FOR UPDATE",
        [e.reservationId],
      )) as any;
      if (dead.length > 0) throw new Rollback<SettleOutcome>('dead_lettered');

      const [update] = (await tx.execute(
        `UPDATE seckill_stock SET available = available - ?, updated_at = CURRENT_TIMESTAMP(3)
          WHERE activity_id = ? AND sku_id = ? AND available >= ?`,
        [e.quantity, target.activityId, target.skuId, e.quantity],
      )) as any;
      if (update.affectedRows !== 1) throw new Rollback<SettleOutcome>('insufficient_stock');

      await tx.execute(
        "INSERT INTO seckill_stock_log (activity_id, sku_id, biz_id, change_type, quantity) VALUES (?, ?, ?, 'DEDUCT', ?)",
        [target.activityId, target.skuId, e.reservationId, e.quantity],
      );
      return 'settled';
    });
  } catch (err) {
    if (err instanceof Rollback) return err.value as SettleOutcome;
    throw err;
  }
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
