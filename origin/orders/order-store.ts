/**
 * Every statement on `seckill_order` and `seckill_refund` (schema/001, 002), and on their shadow
 * twins (schema/011) for a shadow sale: the table comes from the sale's ledger (ledger.ts). The order rows' shapes
 * and the queries of settlement, payment, timeout, status, recovery, reconciliation and reports.
 * Each function takes the pool or the caller's transaction first, so one transaction can span
 * several stores (settlement's stays one transaction).
 */
import { isId } from '../../contract/ids.js';
import type { DbOrTx, Tx } from '../platform/db/pool.js';
import { affected, one, rows } from '../platform/db/rows.js';
import { LEDGERS, ledgerOf, ledgerOfOrderNo, type Ledger } from './ledger.js';
import { OrderStatus, type RefundReason } from './order-status.js';

/** A sale as its ledger (ledger.ts) keys it: the activity, and whether it is a shadow sale. */
export interface SaleRef {
  activityId: string;
  /** A shadow sale's rows are in the shadow tables (ledger.ts); absent means a real sale. */
  shadow?: boolean;
}

/** A sale as the order rows key it. */
export interface SaleIds extends SaleRef {
  skuId: string;
}

const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/** Whether the reservation has an order, locking that row (or the gap) until the transaction ends. */
export async function lockOrderOfReservation(tx: Tx, ledger: Ledger, reservationId: string): Promise<boolean> {
  const row = await one<{ id: string }>(
    tx.execute(`SELECT id FROM ${ledger.order} WHERE reservation_id = ? FOR UPDATE`, [reservationId]),
  );
  return row !== undefined;
}

/** Whether the reservation has an order (a plain read). */
export async function hasOrderOfReservation(db: DbOrTx, ledger: Ledger, reservationId: string): Promise<boolean> {
  const row = await one<{ id: string }>(
    db.execute(`SELECT id FROM ${ledger.order} WHERE reservation_id = ?`, [reservationId]),
  );
  return row !== undefined;
}

/** The orders the users hold in the sale: user → reservation. */
export async function orderOwners(
  tx: DbOrTx,
  sale: SaleIds,
  users: string[],
): Promise<{ user_id: string; reservation_id: string }[]> {
  return rows<{ user_id: string; reservation_id: string }>(
    tx.execute(
      `SELECT user_id, reservation_id FROM ${ledgerOf(sale).order} WHERE activity_id = ? AND sku_id = ? AND user_id IN (${marks(users.length).replaceAll(' ', '')})`,
      [sale.activityId, sale.skuId, ...users],
    ),
  );
}

/** One new order as settlement writes it (status PENDING). */
export interface NewOrder {
  orderNo: string;
  reservationId: string;
  requestId: string;
  userId: string;
  quantity: number;
  traceId: string | null;
}

const ORDER_COLUMNS =
  '(order_no, reservation_id, request_id, activity_id, sku_id, user_id, quantity, status, expire_at, trace_id)';

/** The sale's ids as SQL literals: decimal ids only (contract/ids.ts), so nothing else reaches the text. */
export function saleLiterals(sale: SaleIds): { activity: string; sku: string } {
  if (!isId(sale.activityId) || !isId(sale.skuId))
    throw new Error(`not a sale: activity ${sale.activityId}, sku ${sale.skuId}`);
  return { activity: sale.activityId, sku: sale.skuId };
}

/**
 * One multi-row INSERT of PENDING orders, prepared (`execute`): the sale's ids, the same in every
 * row, are written into the statement as literals (docs/performance.md), and so is the payment
 * window: `expire_at` is the server's `NOW(3)` plus it (every session is in UTC, pool.ts), not a
 * DATETIME parameter per row for the client to encode and the server to bind. Throws on a unique key.
 */
export async function insertPendingOrders(
  tx: Tx,
  sale: SaleIds,
  orders: readonly NewOrder[],
  paymentTimeoutSeconds: number,
): Promise<void> {
  const lit = saleLiterals(sale);
  if (!Number.isInteger(paymentTimeoutSeconds) || paymentTimeoutSeconds < 0)
    throw new Error(`not a payment window: ${paymentTimeoutSeconds}`);
  const row = `(?, ?, ?, ${lit.activity}, ${lit.sku}, ?, ?, ${OrderStatus.PENDING}, NOW(3) + INTERVAL ${paymentTimeoutSeconds} SECOND, ?)`;
  const params: (string | number | null)[] = [];
  for (const o of orders) params.push(o.orderNo, o.reservationId, o.requestId, o.userId, o.quantity, o.traceId);
  await tx.execute(
    `INSERT INTO ${ledgerOf(sale).order} ${ORDER_COLUMNS} VALUES ${orders.map(() => row).join(', ')}`,
    params,
  );
}

/** Ids of PENDING orders past expire_at, oldest first (idx_status_expire), at most `limit`. */
export async function expiredPendingIds(db: DbOrTx, ledger: Ledger, limit: number): Promise<string[]> {
  const found = await rows<{ id: string }>(
    db.query(
      `SELECT id FROM ${ledger.order} WHERE status = ${OrderStatus.PENDING} AND expire_at < NOW(3)
          ORDER BY expire_at LIMIT ${Number(limit)}`,
    ),
  );
  return found.map((r) => String(r.id));
}

/** An order the timeout job locked. */
export interface LockedOrder {
  id: string;
  reservation_id: string;
  activity_id: string;
  sku_id: string;
  quantity: number;
  status: number;
  /** 1 when expire_at is past. */
  expired: number;
}

/** Locks the orders by primary key, ascending (two jobs queue rather than deadlock). */
export async function lockOrdersById(tx: Tx, ledger: Ledger, ids: string[]): Promise<LockedOrder[]> {
  return rows<LockedOrder>(
    tx.query(
      `SELECT id, reservation_id, activity_id, sku_id, quantity, status, expire_at < NOW(3) AS expired
             FROM ${ledger.order} WHERE id IN (${marks(ids.length)}) ORDER BY id FOR UPDATE`,
      ids,
    ),
  );
}

/** PENDING and expired → TIMEOUT, for these ids; returns how many changed. */
export async function markTimedOut(tx: Tx, ledger: Ledger, ids: string[]): Promise<number> {
  return affected(
    tx.query(
      `UPDATE ${ledger.order} SET status = ${OrderStatus.TIMEOUT}, updated_at = NOW(3)
            WHERE id IN (${marks(ids.length)}) AND status = ${OrderStatus.PENDING} AND expire_at < NOW(3)`,
      ids,
    ),
  );
}

/** PENDING → PAID with the payment's id, in the order number's ledger; returns 1 when this call paid it, 0 otherwise. */
export async function markPaid(tx: Tx, orderNo: string, paymentId: string): Promise<number> {
  return affected(
    tx.execute(
      `UPDATE ${ledgerOfOrderNo(orderNo).order} SET status = ${OrderStatus.PAID}, payment_id = ?, paid_at = NOW(3), updated_at = NOW(3)
            WHERE order_no = ? AND status = ${OrderStatus.PENDING}`,
      [paymentId, orderNo],
    ),
  );
}

/** The order's payment state, locked. */
export async function lockOrderByNo(
  tx: Tx,
  orderNo: string,
): Promise<{ status: number; payment_id: string | null; activity_id: string; user_id: string } | undefined> {
  return one<{ status: number; payment_id: string | null; activity_id: string; user_id: string }>(
    tx.execute(
      `SELECT status, payment_id, activity_id, user_id FROM ${ledgerOfOrderNo(orderNo).order} WHERE order_no = ? FOR UPDATE`,
      [orderNo],
    ),
  );
}

/** Records a refund the shop owes (once per order and payment). */
export async function recordRefund(
  tx: Tx,
  refund: { orderNo: string; paymentId: string; activityId: string; userId: string; reason: RefundReason },
): Promise<void> {
  await tx.execute(
    `INSERT INTO ${ledgerOfOrderNo(refund.orderNo).refund} (order_no, payment_id, activity_id, user_id, reason) VALUES (?, ?, ?, ?, ?)
         ON DUPLICATE KEY UPDATE updated_at = updated_at`,
    [refund.orderNo, refund.paymentId, refund.activityId, refund.userId, refund.reason],
  );
}

/** An order as a reservation's status shows it. */
export interface OrderRow {
  order_no: string;
  status: OrderStatus;
  expire_at: Date;
  user_id: string;
  reservation_id: string;
}

/** The order of a reservation, if any. */
export async function orderOfReservation(
  db: DbOrTx,
  ledger: Ledger,
  reservationId: string,
): Promise<OrderRow | undefined> {
  return one<OrderRow>(
    db.execute(
      `SELECT order_no, status, expire_at, user_id, reservation_id FROM ${ledger.order} WHERE reservation_id = ?`,
      [reservationId],
    ),
  );
}

/** The user's order in the sale, if any. */
export async function orderOfUser(db: DbOrTx, sale: SaleIds, userId: string): Promise<OrderRow | undefined> {
  return one<OrderRow>(
    db.execute(
      `SELECT order_no, status, expire_at, user_id, reservation_id FROM ${ledgerOf(sale).order}
        WHERE activity_id = ? AND user_id = ? AND sku_id = ?`,
      [sale.activityId, userId, sale.skuId],
    ),
  );
}

/** The sale's orders as recovery rebuilds Redis from them. */
export async function ordersForRecovery(
  tx: DbOrTx,
  sale: SaleIds,
): Promise<
  {
    reservation_id: string;
    request_id: string;
    user_id: string;
    quantity: number;
    trace_id: string | null;
    ts: number;
  }[]
> {
  return rows(
    tx.execute(
      `SELECT reservation_id, request_id, user_id, quantity, trace_id, UNIX_TIMESTAMP(created_at) * 1000 AS ts
           FROM ${ledgerOf(sale).order} WHERE activity_id = ? AND sku_id = ?`,
      [sale.activityId, sale.skuId],
    ),
  );
}

/** The sale's orders as reconciliation counts them. */
export async function ordersForReconcile(
  tx: DbOrTx,
  sale: SaleIds,
): Promise<{ reservation_id: string; quantity: number; status: number }[]> {
  return rows(
    tx.execute(
      `SELECT reservation_id, quantity, status FROM ${ledgerOf(sale).order} WHERE activity_id = ? AND sku_id = ?`,
      [sale.activityId, sale.skuId],
    ),
  );
}

/** How many of the sale's orders still wait for payment or timeout. */
export async function pendingOrderCount(db: DbOrTx, sale: SaleRef): Promise<number> {
  const row = await one<{ n: number }>(
    db.execute(
      `SELECT COUNT(*) AS n FROM ${ledgerOf(sale).order} WHERE activity_id = ? AND status = ${OrderStatus.PENDING}`,
      [sale.activityId],
    ),
  );
  return Number(row?.n ?? 0);
}

/** The sale's orders counted by status (numeric). */
export async function orderCountsByStatus(db: DbOrTx, sale: SaleRef): Promise<Map<number, number>> {
  const found = await rows<{ status: number; n: number }>(
    db.execute(`SELECT status, COUNT(*) AS n FROM ${ledgerOf(sale).order} WHERE activity_id = ? GROUP BY status`, [
      sale.activityId,
    ]),
  );
  return new Map(found.map((r) => [Number(r.status), Number(r.n)]));
}

/** Paid, pending and timed-out orders of each of the sales, each counted in its own ledger. */
export async function orderCountsOfSales(
  db: DbOrTx,
  sales: SaleRef[],
): Promise<{ activity_id: string; paid: number; pending: number; timeout: number }[]> {
  const counted = [];
  for (const ledger of LEDGERS) {
    const ids = sales.filter((s) => ledgerOf(s) === ledger).map((s) => s.activityId);
    if (ids.length === 0) continue;
    counted.push(
      ...(await rows<{ activity_id: string; paid: number; pending: number; timeout: number }>(
        db.query(
          `SELECT activity_id, SUM(status = ${OrderStatus.PAID}) AS paid, SUM(status = ${OrderStatus.PENDING}) AS pending,
                  SUM(status = ${OrderStatus.TIMEOUT}) AS timeout
             FROM ${ledger.order} WHERE activity_id IN (?) GROUP BY activity_id`,
          [ids],
        ),
      )),
    );
  }
  return counted;
}

/** How many refunds the sale's payments need. */
export async function refundCount(db: DbOrTx, sale: SaleRef): Promise<number> {
  const row = await one<{ n: number }>(
    db.execute(`SELECT COUNT(*) AS n FROM ${ledgerOf(sale).refund} WHERE activity_id = ?`, [sale.activityId]),
  );
  return Number(row?.n ?? 0);
}

/** Whether the sale has any order. */
export async function hasOrders(db: DbOrTx, sale: SaleRef): Promise<boolean> {
  const row = await one<{ found: number }>(
    db.execute(`SELECT EXISTS(SELECT 1 FROM ${ledgerOf(sale).order} WHERE activity_id = ?) AS found`, [
      sale.activityId,
    ]),
  );
  return Number(row!.found) === 1;
}
