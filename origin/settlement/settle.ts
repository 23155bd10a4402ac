/**
 * Settles reservations into MySQL: the transaction of docs/design.md §6, for a batch of reservations of one
 * activity at a time, with exactly the per-reservation semantics of the single-message version.
 * Read (what MySQL holds) → decide (decide.ts: duplicate, dead-lettered, surplus, insufficient
 * stock, or a winner; nothing written for the others) → write: INSERT orders, INSERT stock log
 * DEDUCT, then one conditional `UPDATE seckill_stock ... WHERE available >= Σq` for the batch and
 * COMMIT (see settleBatch for when the stock row is locked first instead).
 * The caller XACKs only after this returns. One commit per batch instead of one per order.
 */
import { hash } from 'node:crypto';
import { ledgerOf, SHADOW_ORDER_PREFIX } from '../orders/ledger.js';
import { recordCreatedEvents } from '../orders/order-event-store.js';
import { inTransaction, isDuplicateKey, type Db, type Tx } from '../platform/db/pool.js';
import { insertPendingOrders, lockOrderOfReservation, orderOwners } from '../orders/order-store.js';
import { deadLetteredInShareMode } from '../orders/dead-letter-store.js';
import { availableUnits, deductAvailable, logDeductions } from '../orders/stock-row-store.js';
import { decideSettlement, type SaleFacts, type SettleOutcome } from './decide.js';
import type { ReservationEvent } from './event.js';

export type { SettleOutcome };

export interface SettleTarget {
  activityId: string;
  skuId: string;
  paymentTimeoutSeconds: number;
  /** A shadow sale: its rows go to the shadow tables (origin/orders/ledger.ts). */
  shadow?: boolean;
  /** Write an `order.created` event (order_event_outbox) with each order: ORDER_EVENTS_URL is set. */
  orderEvents?: boolean;
  /** At most this many events per outbox row (ORDER_EVENTS_BATCH_SIZE); unset: a batch's events in one row. */
  orderEventsPerRow?: number;
}

/** The order's request_id: unique across all sales, so it names the sale and the user too. */
export function storedRequestId(target: SettleTarget, e: ReservationEvent): string {
  return `${target.activityId}:${e.userId}:${e.requestId}`;
}

/**
 * Deterministic, so a replayed settlement could never mint a second order number. The reservation
 * id's first 12 hex digits (its time, contract/ids.ts) then 12 of its hash: later orders sort later
 * in `uk_order_no`, as in the other indexes of the reservation id. A shadow sale's numbers start
 * with SHADOW_ORDER_PREFIX, so a payment callback finds the shadow ledger from the number alone.
 */
export function orderNoFor(reservationId: string, shadow = false): string {
  const dash = reservationId.indexOf('-');
  // The one-shot hash: no Hash object per order (createHash().update().digest() builds a stream
  // object and a Buffer for every order).
  const no = (
    reservationId.slice(dash + 1, dash + 13) + hash('sha256', reservationId, 'hex').slice(0, 12)
  ).toUpperCase();
  return shadow ? SHADOW_ORDER_PREFIX + no : no;
}

/** One reservation: a batch of one, so both paths are the same code and the same transaction. */
export async function settleReservation(db: Db, target: SettleTarget, e: ReservationEvent): Promise<SettleOutcome> {
  return (await settleBatch(db, target, [e])).get(e.reservationId)!;
}

// The batch statements are prepared (`execute`): MariaDB then neither parses thousands of literals
// per batch nor does the client escape them — about a third less server CPU per order
// (docs/performance.md). One statement per sale and batch size; a connection keeps the recent ones
// (MYSQL_PREPARED_STATEMENTS), and under a backlog nearly every batch is full, so they are reused.
// The sale's ids, the same in every row, are written into the statement instead of sent as two
// parameters per row: a quarter fewer parameters for the client to encode and the server to bind.

/** The conditional stock UPDATE matched no row: MySQL has fewer units than the batch needs. */
class StockShort extends Error {}

/** A batch settled without reading the users' orders hit a unique key: it needs that read after all. */
class NotFirstSettlement extends Error {}

/**
 * How a batch is settled: `firstDelivery` skips the read of the users' orders (its reservations
 * were never delivered before, so normally none has an order and no user has another one: Redis
 * grants one reservation per user), `checked` reads them, `stockFirst` also locks the stock row
 * first and counts what is left.
 */
type Mode = 'firstDelivery' | 'checked' | 'stockFirst';

/**
 * Settles many reservations of one activity in one transaction. Returns each reservation's outcome.
 *
 * The stock row is the one thing every consumer of a sale contends for, so it is locked last: the
 * reads and the multi-row INSERTs of orders, stock-log rows (and order events) run first, in
 * parallel with other consumers' batches, and the conditional `UPDATE ... WHERE available >= Σq`
 * comes right before COMMIT. The row's lock is then held for one statement and the commit, not
 * the whole batch (measured in bench/settle.ts: docs/performance.md).
 *
 * What the reads miss (an order committed by another consumer after them) the unique keys catch:
 * the INSERT fails and the batch rolls back. Entries delivered for the first time skip the read of
 * the users' orders (`firstDelivery`: about a tenth of MySQL's work per order,
 * docs/performance.md); if a unique key then fires, nothing is written and the batch is settled again
 * with the read. When the UPDATE finds too few units, the batch is
 * rolled back and settled again with the stock row locked first, so each reservation is checked
 * against what is left in turn (the rare path: Redis never grants more than MySQL holds unless
 * the two disagree). Throws (everything rolled back) on an unexpected error: the caller then
 * splits the batch, down to single reservations, where a duplicate key is classified.
 */
export async function settleBatch(
  db: Db,
  target: SettleTarget,
  events: ReservationEvent[],
  opts: { firstDelivery?: boolean } = {},
): Promise<Map<string, SettleOutcome>> {
  if (events.length === 0) return new Map();
  try {
    if (opts.firstDelivery) {
      try {
        return await inTransaction(db, (tx) => settleIn(tx, target, events, 'firstDelivery'));
      } catch (err) {
        // An order already there (a recovery appended an entry again) or another of the user's:
        // nothing was written; settle it as any batch, reading the users' orders first.
        if (!(err instanceof NotFirstSettlement)) throw err;
      }
    }
    return await inTransaction(db, (tx) => settleIn(tx, target, events, 'checked'));
  } catch (err) {
    if (!(err instanceof StockShort)) throw err;
    return inTransaction(db, (tx) => settleIn(tx, target, events, 'stockFirst'));
  }
}

async function settleIn(
  tx: Tx,
  target: SettleTarget,
  events: ReservationEvent[],
  mode: Mode,
): Promise<Map<string, SettleOutcome>> {
  const facts = await readSaleFacts(tx, target, events, mode);
  const { outcomes, winners } = decideSettlement(events, facts);
  const result = new Map<string, SettleOutcome>(outcomes);
  if (winners.length === 0) return result;
  const written = await writeOrders(tx, target, winners, mode);
  if (written.kind === 'classified') result.set(written.reservationId, written.outcome);
  else for (const e of winners) result.set(e.reservationId, 'settled');
  return result;
}

/**
 * Read: what MySQL holds for the reservations' users (not on a first delivery) and the sale's dead
 * letters (and its stock, when locked first).
 */
async function readSaleFacts(tx: Tx, target: SettleTarget, events: ReservationEvent[], mode: Mode): Promise<SaleFacts> {
  const { activityId } = target;
  let left = Number.POSITIVE_INFINITY;
  if (mode === 'stockFirst') {
    // Batches of this activity take turns; every read below sees what the batches before committed.
    left = (await availableUnits(tx, target, { lock: true })) ?? 0;
  }
  // One read answers both "order exists for this reservation" (duplicate) and "the user already
  // has another order in this sale" (surplus): a reservation's order is its user's order here.
  // Skipped on a first delivery: the unique keys catch what it would have found (writeOrders).
  const orderOf = new Map<string, string>();
  if (mode !== 'firstDelivery') {
    const users = [...new Set(events.map((e) => e.userId))];
    const owners = await orderOwners(tx, target, users);
    for (const o of owners) orderOf.set(String(o.user_id), o.reservation_id);
  }
  // Excludes concurrent dead-lettering (see dead-lettering.ts): a shared lock on the sale's range of
  // dead letters makes a dead letter written meanwhile wait for this COMMIT (and then find the
  // order), while other consumers' batches share it. One range read instead of a lookup per
  // reservation (measured: docs/performance.md); a sale has few dead letters.
  const deadLettered = await deadLetteredInShareMode(tx, activityId);
  return { orderOf, deadLettered, left };
}

type Written =
  | { kind: 'written' }
  /** A batch of one hit a unique key the reads did not foresee: its outcome, nothing written. */
  | { kind: 'classified'; reservationId: string; outcome: 'duplicate' | 'surplus' };

/** Write: the winners' orders, stock-log rows (and order events), then the conditional stock UPDATE. */
async function writeOrders(tx: Tx, target: SettleTarget, winners: ReservationEvent[], mode: Mode): Promise<Written> {
  const { activityId } = target;
  // Once per order (a SHA-256 each): the order rows and the order events both carry it.
  const orderNos = winners.map((e) => orderNoFor(e.reservationId, target.shadow));
  try {
    await insertPendingOrders(
      tx,
      target,
      winners.map((e, i) => ({
        orderNo: orderNos[i]!,
        reservationId: e.reservationId,
        requestId: storedRequestId(target, e),
        userId: e.userId,
        quantity: e.quantity,
        traceId: e.traceId || null,
      })),
      target.paymentTimeoutSeconds,
    );
  } catch (err) {
    // Not foreseen by the reads (another consumer's order committed since), or not read at all (a
    // first delivery: redo it with the read). Alone, classify it; in a batch, give up the batch so
    // the caller splits it.
    if (mode === 'firstDelivery' && isDuplicateKey(err)) throw new NotFirstSettlement();
    if (!isDuplicateKey(err) || winners.length > 1) throw err;
    const e = winners[0]!;
    const mine = await lockOrderOfReservation(tx, ledgerOf(target), e.reservationId);
    return { kind: 'classified', reservationId: e.reservationId, outcome: mine ? 'duplicate' : 'surplus' };
  }
  await logDeductions(tx, target, winners).catch((err) => {
    throw mode === 'firstDelivery' && isDuplicateKey(err) ? new NotFirstSettlement() : err;
  });
  if (target.orderEvents) {
    await recordCreatedEvents(
      tx,
      ledgerOf(target),
      activityId,
      winners.map((e, i) => ({
        orderNo: orderNos[i]!,
        activityId,
        userId: e.userId,
        quantity: e.quantity,
      })),
      target.orderEventsPerRow,
    );
  }
  const deducted = winners.reduce((sum, e) => sum + e.quantity, 0);
  const updated = await deductAvailable(tx, target, deducted);
  if (updated !== 1) {
    // Locked first, the count above was exact, so this cannot happen; if it does, nothing commits.
    if (mode === 'stockFirst') throw new Error('stock changed under a locked row');
    throw new StockShort();
  }
  return { kind: 'written' };
}
