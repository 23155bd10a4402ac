/**
 * The order_event_outbox table (docs/design.md §10 "Downstream order events"): rows written in the same
 * transaction as the order change they announce, claimed, deleted once delivered, or parked by
 * the order-event worker (origin/orders/order-event-worker.ts); listed and retried by the
 * admin routes (order-event-routes.ts). Every statement on the table is here.
 *
 * An event's id is `<orderNo>:<type>`: an order is created, paid and timed out at most once each,
 * so the id is stable across redeliveries, replays and retries, and the unique key makes every
 * write idempotent. `seq` (auto-increment) orders the events of one order: each is written by a
 * transaction that starts after the previous one committed (created by settlement; then paid or
 * timed out, never both: those are conditional updates of the same row).
 *
 * A settlement batch writes its `order.created` events as batch rows (`batch:<hex>` id, the events
 * in `payload`) of at most ORDER_EVENTS_BATCH_SIZE events each, not a row per order: a row per
 * order cost settlement about a third more MySQL work (measured: docs/performance.md). The worker
 * delivers a batch row's events one by one; the ones that fail become rows of their own
 * (`splitBatch`), retried and parked like any event.
 *
 * Every function takes the ledger (ledger.ts) whose outbox it works on: a shadow sale's events are
 * in the shadow outbox, delivered only to SHADOW_ORDER_EVENTS_URL.
 */
import { randomBytes } from 'node:crypto';
import { inTransaction, type Db, type Tx } from '../platform/db/pool.js';
import { affected, one, rows } from '../platform/db/rows.js';
import type { Ledger } from './ledger.js';

export const ORDER_EVENT_TYPES = ['order.created', 'order.paid', 'order.timed_out'] as const;
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];

/**
 * `order_event_outbox.status` (schema/005). Delivered events are deleted: what is left is pending
 * (due or backing off) or parked (after ORDER_EVENTS_MAX_ATTEMPTS; an admin retries it). 1 is unused.
 */
export const OrderEventStatus = { PENDING: 0, PARKED: 2 } as const;
export type OrderEventStatus = (typeof OrderEventStatus)[keyof typeof OrderEventStatus];
export type OrderEventStatusName = 'pending' | 'parked';
const STATUS_BY_NAME: Record<OrderEventStatusName, number> = {
  pending: OrderEventStatus.PENDING,
  parked: OrderEventStatus.PARKED,
};

const BATCH_PREFIX = 'batch:';

export function orderEventId(orderNo: string, type: OrderEventType): string {
  return `${orderNo}:${type}`;
}

export interface OrderEventFacts {
  orderNo: string;
  activityId: string;
  userId: string;
  quantity: number;
}

const COLUMNS = '(event_id, type, order_no, activity_id, user_id, quantity)';

/** Inside the order change's transaction: one event per order (a repeat is a no-op). */
export async function recordOrderEvents(
  tx: Tx,
  ledger: Ledger,
  type: OrderEventType,
  orders: OrderEventFacts[],
): Promise<void> {
  if (orders.length === 0) return;
  await tx.query(
    `INSERT INTO ${ledger.orderEvents} ${COLUMNS} VALUES ${orders.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}
     ON DUPLICATE KEY UPDATE event_id = event_id`,
    orders.flatMap((o) => [orderEventId(o.orderNo, type), type, o.orderNo, o.activityId, o.userId, o.quantity]),
  );
}

/**
 * Settlement's `order.created` events of one sale: batch rows of at most `perRow` events each (all
 * in one row when unset; a single order: its own row), in one multi-row INSERT. Prepared
 * (`execute`, one statement text per number of rows): each row's payload, some 45 bytes per order,
 * goes as one binary parameter, neither escaped here nor parsed as a literal by the server.
 * `perRow` bounds what one delivery round takes (a claim takes whole rows): a round that goes
 * while settlement is still behind (ORDER_EVENTS_YIELD_MS) then delivers about ORDER_EVENTS_BATCH_SIZE
 * events, not a whole settlement batch's.
 */
export async function recordCreatedEvents(
  tx: Tx,
  ledger: Ledger,
  activityId: string,
  orders: OrderEventFacts[],
  perRow = orders.length,
): Promise<void> {
  if (orders.length <= 1) return recordOrderEvents(tx, ledger, 'order.created', orders);
  const size = Math.max(1, Math.floor(perRow));
  const params: (string | number)[] = [];
  for (let i = 0; i < orders.length; i += size) {
    const chunk = orders.slice(i, i + size);
    params.push(
      BATCH_PREFIX + randomBytes(12).toString('hex'),
      activityId,
      chunk.length,
      JSON.stringify(chunk.map((o) => [o.orderNo, o.userId, o.quantity])),
    );
  }
  await tx.execute(
    `INSERT INTO ${ledger.orderEvents} (event_id, type, order_no, activity_id, user_id, quantity, events, payload)
     VALUES ${Array.from({ length: params.length / 4 }, () => "(?, 'order.created', '', ?, 0, 0, ?, ?)").join(', ')}`,
    params,
  );
}

/**
 * Same, for orders the transaction has just changed, read from seckill_order by primary key
 * (timeout job) or order number (payment): one INSERT ... SELECT, no round trip for the facts.
 */
export async function recordOrderEventsOf(
  tx: Tx,
  ledger: Ledger,
  type: OrderEventType,
  by: { ids: string[] } | { orderNo: string },
): Promise<void> {
  const [where, params] =
    'ids' in by ? [`id IN (${by.ids.map(() => '?').join(', ')})`, by.ids] : ['order_no = ?', [by.orderNo]];
  if (params.length === 0) return;
  await tx.query(
    `INSERT INTO ${ledger.orderEvents} ${COLUMNS}
     SELECT CONCAT(order_no, ':', ?), ?, order_no, activity_id, user_id, quantity FROM ${ledger.order}
      WHERE ${where} ORDER BY id
     ON DUPLICATE KEY UPDATE event_id = ${ledger.orderEvents}.event_id`,
    [type, type, ...params],
  );
}

/** One event as a receiver gets it. */
export interface OrderEvent extends OrderEventFacts {
  eventId: string;
  type: OrderEventType;
  occurredAt: Date;
}

export interface OrderEventRow {
  seq: string;
  /** The row's id: the event's, or `batch:<hex>` for a batch of `order.created` events. */
  eventId: string;
  /** The events the row carries: one, or a batch's. */
  events: OrderEvent[];
  status: OrderEventStatusName;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: Date;
}

const selectRow = (
  ledger: Ledger,
) => `SELECT seq, event_id, type, order_no, activity_id, user_id, quantity, occurred_at, status, attempts,
  last_error, next_attempt_at, payload FROM ${ledger.orderEvents}`;
const NAME_BY_STATUS = Object.fromEntries(Object.entries(STATUS_BY_NAME).map(([k, v]) => [v, k])) as Record<
  number,
  OrderEventStatusName
>;

/** A row as SELECT_ROW reads it. */
interface OrderEventOutboxRow {
  seq: string;
  event_id: string;
  type: OrderEventType;
  order_no: string;
  activity_id: string;
  user_id: string;
  quantity: number;
  occurred_at: Date;
  status: number;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date;
  payload: string | null;
}

function toRow(r: OrderEventOutboxRow): OrderEventRow {
  const activityId = String(r.activity_id);
  const occurredAt = new Date(r.occurred_at);
  const events: OrderEvent[] = r.payload
    ? (JSON.parse(r.payload) as [string, string, number][]).map(([orderNo, userId, quantity]) => ({
        eventId: orderEventId(orderNo, 'order.created'),
        type: 'order.created',
        orderNo,
        activityId,
        userId,
        quantity,
        occurredAt,
      }))
    : [
        {
          eventId: r.event_id,
          type: r.type,
          orderNo: r.order_no,
          activityId,
          userId: String(r.user_id),
          quantity: Number(r.quantity),
          occurredAt,
        },
      ];
  return {
    seq: String(r.seq),
    eventId: r.event_id,
    events,
    status: NAME_BY_STATUS[Number(r.status)]!,
    attempts: Number(r.attempts),
    lastError: r.last_error ?? null,
    nextAttemptAt: new Date(r.next_attempt_at),
  };
}

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
