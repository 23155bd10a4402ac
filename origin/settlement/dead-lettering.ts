/**
 * Gives up on a reservation settlement could not write after `maxDeliveries`: records a dead letter
 * and compensates through the store's release (lua/release-3.lua). Every step is idempotent, so a crash anywhere in
 * here is repaired by the next delivery. The dead-letter row and the order row exclude each other:
 * the locking read below and the one in settle.ts make one of the two transactions wait.
 */
import { inTransaction, type Db } from '../platform/db/pool.js';
import { recordDeadLetterRow, setRestocked } from '../orders/dead-letter-store.js';
import { ledgerOf } from '../orders/ledger.js';
import { lockOrderOfReservation } from '../orders/order-store.js';
import { availableUnits } from '../orders/stock-row-store.js';
import type { SaleStock } from '../redis/sale-stock.js';
import type { Sale } from '../redis/redis-store.js';
import type { ReservationEvent } from './event.js';
import type { SettleTarget } from './settle.js';

export type DeadLetterOutcome = 'dead_lettered' | 'already_settled' | 'redis_not_warm';

export async function recordDeadLetter(
  db: Db,
  target: SettleTarget,
  e: ReservationEvent,
  deliveries: number,
  reason: string,
): Promise<'recorded' | 'already_settled'> {
  return inTransaction(db, async (tx) => {
    if (await lockOrderOfReservation(tx, ledgerOf(target), e.reservationId)) return 'already_settled' as const;
    await recordDeadLetterRow(tx, {
      activityId: target.activityId,
      skuId: target.skuId,
      reservationId: e.reservationId,
      userId: e.userId,
      quantity: e.quantity,
      streamId: e.streamId,
      deliveries,
      reason,
      payload: JSON.stringify(e),
    });
    return 'recorded' as const;
  });
}

/**
 * Puts the reservation's units back in Redis — only as far as MySQL still has them — and frees the
 * holder so the user may try again. Returns the units given back, or null when Redis is not warm.
 */
export async function compensate(
  db: Db,
  store: Pick<SaleStock, 'release'>,
  target: SettleTarget & Sale,
  e: ReservationEvent,
): Promise<number | null> {
  const cap = (await availableUnits(db, target)) ?? -1;
  const released = await store.release(target, {
    reservationId: e.reservationId,
    userId: e.userId,
    quantity: e.quantity,
    cap,
  });
  return released.kind === 'not_warmed' ? null : released.restocked;
}

export async function deadLetter(
  db: Db,
  store: Pick<SaleStock, 'release'>,
  target: SettleTarget & Sale,
  e: ReservationEvent,
  deliveries: number,
  reason: string,
): Promise<DeadLetterOutcome> {
  if ((await recordDeadLetter(db, target, e, deliveries, reason)) === 'already_settled') return 'already_settled';
  const restocked = await compensate(db, store, target, e);
  if (restocked === null) return 'redis_not_warm';
  await setRestocked(db, e.reservationId, restocked);
  return 'dead_lettered';
}
