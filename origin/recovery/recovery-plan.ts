/**
 * What a recovery rebuilds, without I/O (recover.ts reads the facts, then writes the plan). Given the
 * surviving Stream and what MySQL holds for the sale (one consistent snapshot, read after the Stream),
 * per reservation:
 *   order in MySQL                                  → settled: its units are out of `available`
 *   dead letter (open / given up) — the dead letter owns it, whatever Redis kept of it:
 *                                                      released = MySQL's `restocked`, the user is free
 *   retried dead letter, no order, not open in the Stream, and the user has no order
 *                                                   → the admin's requeue was lost: unsettled again
 *   no order, no dead letter, entry pending/new     → UNSETTLED: its units are owed to it
 *   no order, no dead letter, entry acked           → surplus, released: released = quantity
 * and then
 *   stock    = available − unsettled − refills not yet synced (outbox pending) − dead-letter units
 *              not restocked                  (exactly the reconciliation's cross check)
 *   holders  = users with orders (any status) + users of unsettled reservations
 *   refilled = reservations whose outbox row is done (pending rows are refilled by the worker)
 *   tranches = releases MySQL applied (in `available`, so in the stock): Redis's record of the
 *              tranches its stock holds, which reconciliation reads; a pending release is left out,
 *              so ReleaseJob adds its units (a surviving entry would make it answer "already")
 *   restore  = reservations MySQL proves that the Stream lacks (a failover lost entries after a
 *              consumer had read them: orders, dead letters) and lost requeues: appended to the
 *              Stream again, so it stays the whole ledger and reconciliation stays exact.
 * A negative stock (MySQL owes more than it has) is refused.
 *
 * Why a dead letter's release comes from MySQL: a failover can lose its entry, or the release and the
 * ack after it. Recovery rewrites `released`, so without this the dead letter's units would be counted
 * as given back in the stock (MySQL says so) but not in Redis, a replayed compensation could decide
 * the restock again against a different cap, and an operator's retry would find nothing released.
 */
import type { ReservationEvent } from '../redis/reservation-event.js';
import type { StreamReservation } from '../redis/sale-ledger.js';
import { DeadLetterStatus } from '../orders/dead-letter-store.js';

export type LedgerEvent = Omit<ReservationEvent, 'streamId'>;

export interface RecoveryFacts {
  /** `seckill_stock.available`. */
  available: number;
  /** Every order of the sale (any status), as the reservation it settled. */
  orders: LedgerEvent[];
  /** Every dead letter of the sale, with the reservation it holds (its payload) and what compensation gave back. */
  deadLetters: { event: LedgerEvent; restocked: number; status: DeadLetterStatus }[];
  /** Every `stock_sync_outbox` row of the sale (refills of timed-out orders). */
  outbox: { reservationId: string; quantity: number; pending: boolean }[];
  /** Every reservation of every bucket's Stream, with "still open" (pending or not yet delivered). */
  stream: ReadonlyMap<string, StreamReservation>;
  /** Releases of held-back units MySQL applied (counted in `available`): tranche id → units. */
  appliedReleases: ReadonlyMap<string, number>;
}

export type RecoveryPlan =
  | { kind: 'refused'; reason: string }
  | {
      kind: 'rebuild';
      stock: number;
      /** userId → reservationId */
      holders: Map<string, string>;
      /** reservationId → units given back, and whose reservation it was */
      released: Map<string, { units: number; userId: string }>;
      /** reservationId → units refilled */
      refilled: Map<string, number>;
      /** tranche id → units: the releases the stock holds */
      tranches: Map<string, number>;
      /** Entries appended to the Stream again. */
      restore: LedgerEvent[];
      /** Reservations owed their units (pending, undelivered, or a lost requeue). */
      unsettled: number;
      pendingRefills: number;
    };

export function computeRecovery(facts: RecoveryFacts): RecoveryPlan {
  const { stream } = facts;
  const ordered = new Set(facts.orders.map((o) => o.reservationId));
  const holders = new Map<string, string>(facts.orders.map((o) => [o.userId, o.reservationId]));
  const owning = facts.deadLetters.filter((d) => d.status !== DeadLetterStatus.RETRIED);
  const owned = new Set(owning.map((d) => d.event.reservationId));
  const released = new Map<string, { units: number; userId: string }>();
  const restore: LedgerEvent[] = facts.orders.filter((o) => !stream.has(o.reservationId));
  let unsettledUnits = 0;
  let unsettled = 0;
  const owe = (e: LedgerEvent) => {
    unsettled++;
    unsettledUnits += e.quantity;
    if (!holders.has(e.userId)) holders.set(e.userId, e.reservationId);
  };

  for (const d of owning) {
    released.set(d.event.reservationId, { units: d.restocked, userId: d.event.userId });
    if (!stream.has(d.event.reservationId)) restore.push(d.event);
  }
  for (const d of facts.deadLetters) {
    const id = d.event.reservationId;
    if (d.status !== DeadLetterStatus.RETRIED || ordered.has(id) || stream.get(id)?.open) continue;
    // Requeued (its units taken, holder set, entry appended), and none of it survived. A surplus
    // release of it (acked, no order of its own) would mean the user has another order.
    if (holders.has(d.event.userId)) continue;
    owe(d.event);
    restore.push(d.event);
  }
  const restored = new Set(restore.map((e) => e.reservationId));
  for (const [reservationId, { event, open }] of stream) {
    if (ordered.has(reservationId) || owned.has(reservationId) || restored.has(reservationId)) continue;
    if (open) owe(event);
    else released.set(reservationId, { units: event.quantity, userId: event.userId });
  }

  const deadNotRestocked = owning.reduce((s, d) => s + d.event.quantity - d.restocked, 0);
  const pending = facts.outbox.filter((o) => o.pending);
  const pendingUnits = pending.reduce((s, o) => s + o.quantity, 0);
  const stock = facts.available - unsettledUnits - pendingUnits - deadNotRestocked;
  if (stock < 0)
    return {
      kind: 'refused',
      reason:
        `MySQL has ${facts.available} units but owes ${facts.available - stock} (unsettled, unsynced refills, ` +
        'dead letters): the state cannot be proven; reconcile and repair MySQL first',
    };
  return {
    kind: 'rebuild',
    stock,
    holders,
    released,
    refilled: new Map(facts.outbox.filter((o) => !o.pending).map((o) => [o.reservationId, o.quantity])),
    tranches: new Map(facts.appliedReleases),
    restore,
    unsettled,
    pendingRefills: pending.length,
  };
}
