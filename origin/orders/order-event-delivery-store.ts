/**
 * The order-event worker's statements on order_event_outbox (origin/orders/order-event-worker.ts;
 * the table, its rows and the writes: order-event-store.ts): claim due rows with a lease, delete the
 * delivered ones, back off or park a failed try, and split a batch row whose events partly failed.
 * Every function takes the ledger (ledger.ts) whose outbox it works on.
 */
import { inTransaction, type Db, type Tx } from '../platform/db/pool.js';
import { affected, rows } from '../platform/db/rows.js';
import type { Ledger } from './ledger.js';
import {
  BATCH_PREFIX,
  OrderEventStatus,
  selectRow,
  toRow,
  type OrderEvent,
  type OrderEventOutboxRow,
  type OrderEventRow,
} from './order-event-store.js';

/**
 * Claims due rows for delivery: pending, due (`next_attempt_at` passed: backoff over, or the
 * lease of a worker that died ran out), and not waiting for an earlier event of their order — a
 * paid or timed-out event waits while the order's `order.created` is still here (in flight,
 * backing off or parked), on its own or in an older batch row (batch rows are few: a range of the
 * event-id key). The claim is a lease: `next_attempt_at` moves `leaseMs` ahead and `attempts`
 * counts the try, committed before any delivery (no remote call inside a transaction).
 */
export async function claimOrderEvents(
  tx: Tx,
  ledger: Ledger,
  limit: number,
  leaseMs: number,
): Promise<OrderEventRow[]> {
  const t = ledger.orderEvents;
  const due = await rows<{ seq: string; events: number }>(
    tx.query(
      `SELECT e.seq, e.events FROM ${t} e
      WHERE e.status = ${OrderEventStatus.PENDING} AND e.next_attempt_at <= NOW(3)
        AND (e.type = 'order.created' OR (
              NOT EXISTS (SELECT 1 FROM ${t} p WHERE p.event_id = CONCAT(e.order_no, ':order.created'))
          AND NOT EXISTS (SELECT 1 FROM ${t} b WHERE b.event_id LIKE '${BATCH_PREFIX}%' AND b.seq < e.seq)))
      ORDER BY e.seq LIMIT ${Number(limit)} FOR UPDATE SKIP LOCKED`,
    ),
  );
  // `limit` counts events, not rows: a settlement batch's row holds many. Rows are taken in order
  // until their events reach it (one at least); the others stay due, unchanged, and only the taken
  // rows' payloads are read.
  const seqs: string[] = [];
  let events = 0;
  for (const r of due) {
    if (events >= limit) break;
    seqs.push(String(r.seq));
    events += Number(r.events);
  }
  if (seqs.length === 0) return [];
  const marks = seqs.map(() => '?').join(', ');
  await tx.query(
    `UPDATE ${t} SET attempts = attempts + 1, next_attempt_at = NOW(3) + INTERVAL ? MICROSECOND
      WHERE seq IN (${marks})`,
    [leaseMs * 1000, ...seqs],
  );
  const claimed = await rows<OrderEventOutboxRow>(
    tx.query(`${selectRow(ledger)} WHERE seq IN (${marks}) ORDER BY seq`, seqs),
  );
  // attempts as read after the UPDATE: this claim's try is counted.
  return claimed.map(toRow);
}

/** Delivered: the rows go, in one statement per round (an id stays stable for a receiver that sees it again). */
export async function markDelivered(db: Db, ledger: Ledger, seqs: string[]): Promise<void> {
  if (seqs.length === 0) return;
  await db.query(`DELETE FROM ${ledger.orderEvents} WHERE seq IN (${seqs.map(() => '?').join(', ')})`, seqs);
}

export type FailedTry = { park: true } | { park: false; retryInMs: number };

/**
 * A failed try: due again after `retryInMs`, or parked when `park`. Only the holder of the claim
 * (same attempt count) may mark it, so a worker whose lease ran out cannot undo a newer claim.
 */
export async function markFailed(
  db: Db,
  ledger: Ledger,
  row: Pick<OrderEventRow, 'seq' | 'attempts'>,
  error: string,
  next: FailedTry,
): Promise<void> {
  await db.execute(
    `UPDATE ${ledger.orderEvents} SET status = ?, last_error = ?, next_attempt_at = NOW(3) + INTERVAL ? MICROSECOND
      WHERE seq = ? AND attempts = ? AND status = ${OrderEventStatus.PENDING}`,
    [
      next.park ? OrderEventStatus.PARKED : OrderEventStatus.PENDING,
      error.slice(0, 255),
      next.park ? 0 : Math.round(next.retryInMs * 1000),
      row.seq,
      row.attempts,
    ],
  );
}

/**
 * A delivered batch row with failures: in one transaction the failed events become rows of their
 * own (one failed try each, backed off or parked) and the batch row goes. Only the holder of the
 * claim does it (same attempt count); a crash before it redelivers the whole batch.
 */
export async function splitBatch(
  db: Db,
  ledger: Ledger,
  row: Pick<OrderEventRow, 'seq' | 'attempts' | 'events'>,
  failed: { event: OrderEvent; error: string; next: FailedTry }[],
): Promise<void> {
  await inTransaction(db, async (tx) => {
    const gone = await affected(
      tx.execute(`DELETE FROM ${ledger.orderEvents} WHERE seq = ? AND attempts = ?`, [row.seq, row.attempts]),
    );
    if (gone !== 1 || failed.length === 0) return;
    await tx.query(
      `INSERT INTO ${ledger.orderEvents}
         (event_id, type, order_no, activity_id, user_id, quantity, occurred_at, status, attempts, last_error, next_attempt_at)
       VALUES ${failed.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, 1, ?, NOW(3) + INTERVAL ? MICROSECOND)').join(', ')}
       ON DUPLICATE KEY UPDATE event_id = event_id`,
      failed.flatMap(({ event: e, error, next }) => [
        e.eventId,
        e.type,
        e.orderNo,
        e.activityId,
        e.userId,
        e.quantity,
        e.occurredAt,
        next.park ? OrderEventStatus.PARKED : OrderEventStatus.PENDING,
        error.slice(0, 255),
        next.park ? 0 : Math.round(next.retryInMs * 1000),
      ]),
    );
  });
}
