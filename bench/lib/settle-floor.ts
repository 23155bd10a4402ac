/**
 * Settlement's floor: the cheapest program that writes what settlement writes. For each batch, one
 * transaction of the very statements a settlement batch ends with (origin/settlement/settle.ts's
 * write step): the orders' multi-row INSERT (origin/orders/order-store.ts), the stock-log DEDUCT
 * rows (origin/orders/stock-row-store.ts), the `order.created` outbox rows when events are on
 * (origin/orders/order-event-store.ts), then the conditional stock UPDATE, and COMMIT — on the same
 * schema, the same batch size, the same number of connections. No Stream, no read of what MySQL
 * holds, no decision, no consumer loop, no XACK: what is left when settlement costs nothing of its
 * own. The store functions are called, not copied, so the floor follows any change to their SQL.
 */
import { randomInt } from 'node:crypto';
import { newReservationId } from '../../contract/ids.js';
import { ledgerOf } from '../../origin/orders/ledger.js';
import { recordCreatedEvents } from '../../origin/orders/order-event-store.js';
import { insertPendingOrders } from '../../origin/orders/order-store.js';
import { inTransaction, type Db, type Tx } from '../../origin/platform/db/pool.js';
import { deductAvailable, logDeductions } from '../../origin/orders/stock-row-store.js';
import { orderNoFor, storedRequestId, type SettleTarget } from '../../origin/settlement/settle.js';
import type { ReservationEvent } from '../../origin/settlement/event.js';

/** One settlement batch's writes, in settlement's order, inside the caller's transaction. */
export async function writeSettledBatch(tx: Tx, target: SettleTarget, batch: ReservationEvent[]): Promise<void> {
  const orderNos = batch.map((e) => orderNoFor(e.reservationId, target.shadow));
  await insertPendingOrders(
    tx,
    target,
    batch.map((e, i) => ({
      orderNo: orderNos[i]!,
      reservationId: e.reservationId,
      requestId: storedRequestId(target, e),
      userId: e.userId,
      quantity: e.quantity,
      traceId: e.traceId || null,
    })),
    target.paymentTimeoutSeconds,
  );
  await logDeductions(tx, target, batch);
  if (target.orderEvents)
    await recordCreatedEvents(
      tx,
      ledgerOf(target),
      target.activityId,
      batch.map((e, i) => ({
        orderNo: orderNos[i]!,
        activityId: target.activityId,
        userId: e.userId,
        quantity: e.quantity,
      })),
      target.orderEventsPerRow,
    );
  const units = batch.reduce((sum, e) => sum + e.quantity, 0);
  if ((await deductAvailable(tx, target, units)) !== 1) throw new Error('settle floor: the stock row ran short');
}

/**
 * `n` reservations of the sale as the reserve script queues them for the settle benchmark: random
 * reservation ids (contract/ids.ts, their time first), distinct users in no order, one unit each,
 * no trace id.
 */
export function floorReservations(activityId: string, n: number): ReservationEvent[] {
  const users = new Set<number>();
  while (users.size < n) users.add(randomInt(1, 2 ** 47));
  return [...users].map((userId, i) => ({
    streamId: `0-${i + 1}`,
    reservationId: newReservationId(activityId),
    requestId: `b${i}`,
    userId: String(userId),
    quantity: 1,
    traceId: '',
    ts: Date.now(),
  }));
}

/**
 * Writes every reservation in batches of `batchSize`, `connections` transactions at a time (as
 * that many consumers each settle one batch at a time); the clock runs from the first BEGIN to the
 * last COMMIT.
 */
export async function runSettleFloor(
  db: Db,
  target: SettleTarget,
  reservations: ReservationEvent[],
  opts: { batchSize: number; connections: number },
): Promise<{ seconds: number; perSecond: number }> {
  const batches: ReservationEvent[][] = [];
  for (let i = 0; i < reservations.length; i += opts.batchSize) batches.push(reservations.slice(i, i + opts.batchSize));
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: opts.connections }, async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        await inTransaction(db, (tx) => writeSettledBatch(tx, target, batch));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { seconds, perSecond: reservations.length / seconds };
}
