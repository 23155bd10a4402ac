/**
 * Recover after Redis lost a sale's data (DESIGN §5): rebuilds stock, holders, `released` and
 * `refilled` from what can be proven, atomically (lua/recover-8.lua), then the sale may sell again.
 *
 * The rule. The Stream (with its consumer group) must have survived: it is the only record of
 * reservations granted but not yet settled — without it the state cannot be proven and recover
 * refuses (409). The Stream and the group's position are read FIRST, then MySQL in one consistent
 * snapshot, so anything settled in between is already in MySQL. Per reservation of the Stream:
 *   order in MySQL                              → settled: its units are out of `available`
 *   dead letter (not retried), entry acked      → compensated: released = restocked
 *   dead letter, entry still pending            → compensation will run again: nothing recorded
 *   no order, no dead letter, entry pending/new → UNSETTLED: its units are owed to it
 *   no order, no dead letter, entry acked       → surplus, released: released = quantity
 * and then
 *   stock    = available − unsettled − refills not yet synced (outbox pending) − dead-letter units
 *              not restocked                  (exactly the reconciliation's cross check)
 *   holders  = users with orders (any status) + users of unsettled reservations
 *   refilled = reservations whose outbox row is done (pending rows are refilled by the worker)
 *   restored = orders whose reservation the Stream lacks (a failover lost entries a consumer had
 *              already settled): appended to the Stream again, so it stays the whole ledger; MySQL,
 *              not the Stream, proves them
 * A negative stock (MySQL owes more than it has) is refused too.
 */
import { ContractError } from '../../contract/errors.js';
import { requireActivity, saleOf } from '../activity/store.js';
import type { StrandedBorrow } from '../redis/borrow.js';
import type { OriginContext } from '../context.js';
import { inTransaction, type Db } from '../db/pool.js';
import { one, rows } from '../db/rows.js';
import { OutboxStatus } from '../db/statuses.js';
import { withRecoveryLock } from './recovery-lock.js';

export interface RecoverResult {
  activityId: string;
  stock: number;
  holders: number;
  unsettled: number;
  pendingRefills: number;
  state: string;
  /** Reservations with an order that the surviving Stream lacked, appended to it again. */
  restored?: number;
  /** Stock buckets, warm sale: units of borrows a dead process left half-done, given back to their bucket. */
  returnedFromTransit?: number;
}

async function returnedInTransit(
  ctx: OriginContext,
  record: Awaited<ReturnType<typeof requireActivity>>,
  returned: StrandedBorrow[],
): Promise<RecoverResult> {
  const { activityId } = record.config;
  const stock = (await ctx.stock.stock(saleOf(record))) ?? 0;
  const result: RecoverResult = {
    activityId,
    stock,
    holders: 0,
    unsettled: 0,
    pendingRefills: 0,
    state: record.state,
    returnedFromTransit: returned.reduce((s, r) => s + (r.donor === null ? 0 : r.quantity), 0),
  };
  ctx.metrics.orderTransitions.inc({ transition: 'recover' });
  ctx.log.warn({ ...result, returned }, 'units in transit between buckets returned');
  if (stock > 0) ctx.soldOut.set(activityId, false);
  return result;
}

/** True when MySQL shows the sale sold something: warm-up must then not load a fresh stock. */
export async function hasSaleHistory(db: Db, activityId: string): Promise<boolean> {
  const row = await one<{ history: number }>(
    db.execute(
      `SELECT EXISTS(SELECT 1 FROM seckill_order WHERE activity_id = ?)
           OR EXISTS(SELECT 1 FROM seckill_dead_letter WHERE activity_id = ?) AS history`,
      [activityId, activityId],
    ),
  );
  return Number(row!.history) === 1;
}

const refuse = (message: string) => new ContractError('conflict', message);

/**
 * The operator's recover (admin API): under the sale's recovery lock (recovery-lock.ts), so it never
 * runs beside another process's recovery. Whoever waited finds the sale warm and is told there is
 * nothing to recover (409), rather than rebuilding it a second time.
 */
export function recover(ctx: OriginContext, activityId: string): Promise<RecoverResult> {
  return withRecoveryLock(ctx.db, activityId, ctx.config.RECOVER_LOCK_WAIT_MS, () =>
    recoverHoldingLock(ctx, activityId),
  );
}

/** recover without taking the lock: for a caller that holds it (the failover watch). */
export async function recoverHoldingLock(ctx: OriginContext, activityId: string): Promise<RecoverResult> {
  const record = await requireActivity(ctx.db, activityId);
  const { skuId, maxPerUser } = record.config;
  const sale = saleOf(record);
  const warm = await ctx.stock.warmBuckets(sale);
  if (warm > 0 && warm < sale.buckets)
    throw refuse(
      `${warm} of ${sale.buckets} stock buckets still hold stock (one cluster master lost its share): the lost ` +
        'share cannot be proven while the others sell. Pause the sale, let settlement finish, then delete the ' +
        "remaining buckets' stock keys and recover the whole sale.",
    );
  if (warm === sale.buckets) {
    // A warm bucketed sale may still hold units in transit between buckets (a process died mid-borrow).
    const returned = sale.buckets > 1 ? await ctx.stock.returnStranded(sale, ctx.config.BORROW_STALE_MS) : [];
    if (returned.length === 0)
      throw refuse('Redis still holds this sale (its stock key exists): there is nothing to recover');
    return returnedInTransit(ctx, record, returned);
  }

  const stream = await ctx.stock.streamReservations(sale);
  if (!stream)
    throw refuse(
      'the reservation Stream or its consumer group is gone: reservations granted but not yet settled cannot be ' +
        'known, so the stock cannot be proven. Selling stays stopped.',
    );

  const db = await inTransaction(ctx.db, async (tx) => {
    const stock = (await one<{ available: number }>(
      tx.execute('SELECT available FROM seckill_stock WHERE activity_id = ? AND sku_id = ?', [activityId, skuId]),
    ))!;
    const orders = await rows<{
      reservation_id: string;
      request_id: string;
      user_id: string;
      quantity: number;
      trace_id: string | null;
      ts: number;
    }>(
      tx.execute(
        `SELECT reservation_id, request_id, user_id, quantity, trace_id, UNIX_TIMESTAMP(created_at) * 1000 AS ts
           FROM seckill_order WHERE activity_id = ? AND sku_id = ?`,
        [activityId, skuId],
      ),
    );
    const dead = await rows<{ reservation_id: string; quantity: number; restocked: number }>(
      tx.execute(
        `SELECT reservation_id, quantity, restocked FROM seckill_dead_letter
          WHERE activity_id = ? AND sku_id = ? AND status <> 'retried'`,
        [activityId, skuId],
      ),
    );
    const outbox = await rows<{ reservation_id: string; quantity: number; status: number }>(
      tx.execute(
        'SELECT reservation_id, quantity, status FROM stock_sync_outbox WHERE activity_id = ? AND sku_id = ?',
        [activityId, skuId],
      ),
    );
    return { available: Number(stock.available), orders, dead, outbox };
  });

  const orderOf = new Map<string, string>(db.orders.map((o) => [o.reservation_id, String(o.user_id)]));
  const holders = new Map<string, string>(db.orders.map((o) => [String(o.user_id), o.reservation_id]));
  const deadOf = new Map<string, { quantity: number; restocked: number }>(
    db.dead.map((d) => [d.reservation_id, { quantity: Number(d.quantity), restocked: Number(d.restocked) }]),
  );
  const released = new Map<string, { units: number; userId: string }>();
  let unsettledUnits = 0;
  let unsettled = 0;
  for (const [reservationId, { event, open }] of stream) {
    if (orderOf.has(reservationId)) continue;
    const dead = deadOf.get(reservationId);
    if (dead) {
      if (!open) released.set(reservationId, { units: dead.restocked, userId: event.userId });
      continue;
    }
    if (open) {
      unsettled++;
      unsettledUnits += event.quantity;
      if (!holders.has(event.userId)) holders.set(event.userId, reservationId);
    } else {
      released.set(reservationId, { units: event.quantity, userId: event.userId });
    }
  }
  const deadNotRestocked = db.dead.reduce((s, d) => s + Number(d.quantity) - Number(d.restocked), 0);
  const pending = db.outbox.filter((o) => Number(o.status) === OutboxStatus.PENDING);
  const pendingUnits = pending.reduce((s, o) => s + Number(o.quantity), 0);
  const refilled = db.outbox.filter((o) => Number(o.status) !== OutboxStatus.PENDING);
  const stock = db.available - unsettledUnits - pendingUnits - deadNotRestocked;
  if (stock < 0)
    throw refuse(
      `MySQL has ${db.available} units but owes ${db.available - stock} (unsettled, unsynced refills, dead letters): ` +
        'the state cannot be proven; reconcile and repair MySQL first',
    );

  const restore = db.orders
    .filter((o: any) => !stream.has(o.reservation_id))
    .map((o: any) => ({
      reservationId: String(o.reservation_id),
      requestId: String(o.request_id),
      userId: String(o.user_id),
      quantity: Number(o.quantity),
      traceId: o.trace_id ?? '',
      ts: Math.round(Number(o.ts)),
    }));
  const rebuilt = await ctx.stock.recover(sale, {
    stock,
    state: record.state,
    maxPerUser,
    holders,
    released,
    refilled: new Map(refilled.map((o: any) => [o.reservation_id, Number(o.quantity)])),
    restore,
  });
  if (rebuilt.kind === 'warm') throw refuse('the sale became warm while recovering; nothing was changed');
  if (rebuilt.kind === 'no_stream')
    throw refuse('the reservation Stream vanished while recovering; nothing was changed');

  const result: RecoverResult = {
    activityId,
    stock,
    holders: rebuilt.holders,
    unsettled,
    pendingRefills: pending.length,
    state: record.state,
    restored: restore.length,
  };
  ctx.metrics.orderTransitions.inc({ transition: 'recover' });
  ctx.log.warn(result, 'sale recovered into Redis from MySQL and the Stream');
  if (!ctx.soldOut.set(activityId, stock <= 0)) await ctx.publisher.publish(activityId);
  return result;
}
