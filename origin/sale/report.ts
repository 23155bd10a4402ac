/** The end-of-sale report: the reconciliation plus counts of orders by status, refills and dead letters. */
import { notReleased } from './tranches.js';
import { reconcile, type ReconcileDeps, type Reconciliation } from '../recovery/reconcile.js';
import { one, rows } from '../platform/db/rows.js';
import { OrderStatus, OutboxStatus } from '../platform/db/statuses.js';

/** The report reads MySQL and, for the reconciliation, the stock store. */
export type ReportDeps = ReconcileDeps;

export interface SaleReport {
  reconciliation: Reconciliation;
  orders: { pending: number; paid: number; timeout: number; total: number };
  refills: { logged: number; applied: number; pending: number };
  deadLetters: Record<string, number>;
  refundsNeeded: number;
  /** Tranches (docs/design.md §10): units still held back, releases committed but not yet in Redis, units released. */
  tranches: { heldBack: number; pending: number; applied: number };
  /** Scheduled warm-up step reached (pending, warmed, verified, mismatch, ...). */
  warmupStatus: string | null;
}

export async function saleReport(ctx: ReportDeps, activityId: string): Promise<SaleReport> {
  const reconciliation = await reconcile(ctx, activityId);
  const orderRows = await rows<{ status: number; n: number }>(
    ctx.db.execute('SELECT status, COUNT(*) AS n FROM seckill_order WHERE activity_id = ? GROUP BY status', [
      activityId,
    ]),
  );
  const byStatus = new Map<number, number>(orderRows.map((r) => [Number(r.status), Number(r.n)]));
  const refills = (await one<{ logged: number; applied: number; pending: number; refunds: number }>(
    ctx.db.execute(
      `SELECT (SELECT COUNT(*) FROM seckill_stock_log WHERE activity_id = ? AND change_type = 'REFILL') AS logged,
              (SELECT COUNT(*) FROM stock_sync_outbox WHERE activity_id = ? AND status = ${OutboxStatus.DONE}) AS applied,
              (SELECT COUNT(*) FROM stock_sync_outbox WHERE activity_id = ? AND status = ${OutboxStatus.PENDING}) AS pending,
              (SELECT COUNT(*) FROM seckill_refund WHERE activity_id = ?) AS refunds`,
      [activityId, activityId, activityId, activityId],
    ),
  ))!;
  const deadRows = await rows<{ status: string; n: number }>(
    ctx.db.execute('SELECT status, COUNT(*) AS n FROM seckill_dead_letter WHERE activity_id = ? GROUP BY status', [
      activityId,
    ]),
  );
  const orders = {
    pending: byStatus.get(OrderStatus.PENDING) ?? 0,
    paid: byStatus.get(OrderStatus.PAID) ?? 0,
    timeout: byStatus.get(OrderStatus.TIMEOUT) ?? 0,
    total: 0,
  };
  orders.total = orders.pending + orders.paid + orders.timeout;
  const warm = await one<{ warmup_status: string }>(
    ctx.db.execute('SELECT warmup_status FROM seckill_activity WHERE id = ?', [activityId]),
  );
  return {
    reconciliation,
    orders,
    refills: { logged: Number(refills.logged), applied: Number(refills.applied), pending: Number(refills.pending) },
    deadLetters: Object.fromEntries(deadRows.map((r) => [r.status, Number(r.n)])),
    refundsNeeded: Number(refills.refunds),
    tranches: await notReleased(ctx.db, activityId),
    warmupStatus: warm?.warmup_status ?? null,
  };
}
