/**
 * The order_event_outbox table (docs/design.md §10 "Downstream order events"): rows written in the same
 * transaction as the order change they announce, claimed, deleted once delivered, or parked by
 * the order-event worker (origin/orders/order-event-worker.ts); listed and retried by the
 * admin routes (order-event-routes.ts). This store holds the writes and the table's row types and
 * status names; the worker's claims and marks are order-event-delivery-store.ts, the operators'
 * reads and retries order-event-admin-store.ts.
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
 * (`splitBatch`, order-event-delivery-store.ts), retried and parked like any event.
 *
 * Every function takes the ledger (ledger.ts) whose outbox it works on: a shadow sale's events are
 * in the shadow outbox, delivered only to SHADOW_ORDER_EVENTS_URL.
 */
import { randomBytes } from 'node:crypto';
import type { Tx } from '../platform/db/pool.js';
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
export const STATUS_BY_NAME: Record<OrderEventStatusName, number> = {
  pending: OrderEventStatus.PENDING,
  parked: OrderEventStatus.PARKED,
};

/** The id prefix of a settlement batch's row of `order.created` events. */
export const BATCH_PREFIX = 'batch:';

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

/** Every column a row is read with (`toRow`), FROM the ledger's outbox. */
export const selectRow = (
  ledger: Ledger,
) => `SELECT seq, event_id, type, order_no, activity_id, user_id, quantity, occurred_at, status, attempts,
  last_error, next_attempt_at, payload FROM ${ledger.orderEvents}`;
const NAME_BY_STATUS = Object.fromEntries(Object.entries(STATUS_BY_NAME).map(([k, v]) => [v, k])) as Record<
  number,
  OrderEventStatusName
>;

/** A row as selectRow reads it. */
export interface OrderEventOutboxRow {
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

export function toRow(r: OrderEventOutboxRow): OrderEventRow {
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
