/** The end-of-sale report: the reconciliation plus counts of orders by status, refills and dead letters. */
import { notReleased } from '../sale/tranches.js';
import { reconcile, type ReconcileDeps, type Reconciliation } from '../recovery/reconcile.js';
import { OrderStatus } from '../orders/order-status.js';
import { inConsistentSnapshot, type Db } from '../platform/db/pool.js';
import { orderCountsByStatus, refundCount } from '../orders/order-store.js';
import { OutboxStatus, refillCount } from '../orders/refill-outbox-store.js';
import { deadLetterCountsByStatus } from '../orders/dead-letter-store.js';
import { warmupStatusOf } from '../sale/warmup-store.js';
import { refillLogCount } from '../orders/stock-row-store.js';
import { requireActivity } from '../sale/sale-store.js';

/** The report reads MySQL, and runs the reconciliation. */
export type ReportDeps = ReconcileDeps & { db: Db };

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

export async function saleReport(deps: ReportDeps, activityId: string): Promise<SaleReport> {
  const reconciliation = await reconcile(deps, activityId);
  // A shadow sale's report reads the shadow tables (origin/orders/ledger.ts), a real one's never do.
  const sale = { activityId, shadow: (await requireActivity(deps.db, activityId)).shadow };
  const byStatus = await orderCountsByStatus(deps.db, sale);
  // One snapshot, as the one statement this was: a refill logged and queued together counts in both.
  const refills = await inConsistentSnapshot(deps.db, async (tx) => ({
    logged: await refillLogCount(tx, sale),
    applied: await refillCount(tx, sale, OutboxStatus.DONE),
    pending: await refillCount(tx, sale, OutboxStatus.PENDING),
    refunds: await refundCount(tx, sale),
  }));
  const deadLetters = await deadLetterCountsByStatus(deps.db, activityId);
  const orders = {
    pending: byStatus.get(OrderStatus.PENDING) ?? 0,
    paid: byStatus.get(OrderStatus.PAID) ?? 0,
    timeout: byStatus.get(OrderStatus.TIMEOUT) ?? 0,
    total: 0,
  };
  orders.total = orders.pending + orders.paid + orders.timeout;
  const warmupStatus = await warmupStatusOf(deps.db, activityId);
  return {
    reconciliation,
    orders,
    refills: { logged: Number(refills.logged), applied: Number(refills.applied), pending: Number(refills.pending) },
    deadLetters,
    refundsNeeded: Number(refills.refunds),
    tranches: await notReleased(deps.db, activityId),
    warmupStatus,
  };
}
