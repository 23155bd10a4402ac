/**
 * Settles one reservation into MySQL — exactly the transaction of DESIGN §6:
 *   order exists for reservation? → duplicate delivery
 *   INSERT order (same user's OTHER reservation → surplus)
 *   dead-lettered meanwhile? → stop (the dead letter owns it)
 *   UPDATE stock ... WHERE available >= q (0 rows → insufficient, roll back)
 *   INSERT stock log DEDUCT
 * COMMIT; the caller XACKs only after this returns.
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
            `${e.userId}:${e.requestId}`,
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
