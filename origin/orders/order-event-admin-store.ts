/**
 * The operators' statements on order_event_outbox (the admin routes, order-event-routes.ts; the
 * table, its rows and the writes: order-event-store.ts): list pending or parked events, find one,
 * send a parked one again, and the figures /metrics reads. Every function takes the ledger
 * (ledger.ts) whose outbox it works on.
 */
import type { Db } from '../platform/db/pool.js';
import { affected, one, rows } from '../platform/db/rows.js';
import type { Ledger } from './ledger.js';
import {
  BATCH_PREFIX,
  OrderEventStatus,
  selectRow,
  STATUS_BY_NAME,
  toRow,
  type OrderEventOutboxRow,
  type OrderEventRow,
  type OrderEventStatusName,
} from './order-event-store.js';

/** Events of single rows (a batch row's events are listed once they failed and got rows of their own). */
export async function listOrderEvents(
  db: Db,
  ledger: Ledger,
  status: OrderEventStatusName,
  limit: number,
  afterSeq = '0',
): Promise<OrderEventRow[]> {
  const listed = await rows<OrderEventOutboxRow>(
    db.query(
      `${selectRow(ledger)} WHERE status = ? AND seq > ? AND event_id NOT LIKE '${BATCH_PREFIX}%' ORDER BY seq LIMIT ${Number(limit)}`,
      [STATUS_BY_NAME[status], afterSeq],
    ),
  );
  return listed.map(toRow);
}

/** A parked event back to pending, due now, with a fresh attempt budget. False when not parked. */
export async function retryParked(db: Db, ledger: Ledger, eventId: string): Promise<boolean> {
  const changed = await affected(
    db.execute(
      `UPDATE ${ledger.orderEvents} SET status = ${OrderEventStatus.PENDING}, attempts = 0, next_attempt_at = NOW(3)
        WHERE event_id = ? AND status = ${OrderEventStatus.PARKED}`,
      [eventId],
    ),
  );
  return changed === 1;
}

export async function findOrderEvent(db: Db, ledger: Ledger, eventId: string): Promise<OrderEventRow | null> {
  const found = await one<OrderEventOutboxRow>(db.execute(`${selectRow(ledger)} WHERE event_id = ?`, [eventId]));
  return found ? toRow(found) : null;
}

/** Backlog (pending events), the age of the oldest pending one, and the parked count: /metrics gauges. */
export async function orderEventFigures(
  db: Db,
  ledger: Ledger,
): Promise<{ backlog: number; oldestAgeSeconds: number; parked: number }> {
  const r: { backlog?: unknown; parked?: unknown; age?: unknown } =
    (await one<{ backlog: unknown; parked: unknown; age: unknown }>(
      db.query(
        `SELECT SUM(IF(status = ${OrderEventStatus.PENDING}, events, 0)) AS backlog,
                SUM(IF(status = ${OrderEventStatus.PARKED}, events, 0)) AS parked,
                TIMESTAMPDIFF(MICROSECOND, MIN(IF(status = ${OrderEventStatus.PENDING}, occurred_at, NULL)), NOW(3)) AS age
           FROM ${ledger.orderEvents}`,
      ),
    )) ?? {};
  return {
    backlog: Number(r.backlog ?? 0),
    parked: Number(r.parked ?? 0),
    oldestAgeSeconds: r.age == null ? 0 : Math.max(0, Number(r.age) / 1e6),
  };
}
