/** Shared by the reconciliation tests: its deps, a seam between the two snapshots, failing checks in brief. */
import type { ReconcileJobDeps } from '../../origin/recovery/reconcile-job.js';
import type { ReconcileDeps, Reconciliation } from '../../origin/recovery/reconcile.js';
import type { LedgerSnapshot } from '../../origin/redis/sale-ledger.js';
import type { TestOrigin } from './origin.js';

/** `name expected/actual` of every failing check. */
export const failingChecks = (rec: Reconciliation) =>
  rec.checks.filter((c) => !c.ok).map((c) => `${c.name} ${c.expected}/${c.actual}`);

/** What reconciliation reads, from the test origin's own pieces (as origin/server.ts hands them). */
export function reconcileDeps(t: TestOrigin): ReconcileDeps {
  return { db: t.origin.ctx.db, ledger: t.origin.ctx.stock.ledger, config: t.origin.ctx.config };
}

/** What the periodic reconciliation uses, from the test origin's own pieces. */
export function reconcileJobDeps(t: TestOrigin): ReconcileJobDeps {
  const { ctx } = t.origin;
  return {
    db: ctx.db,
    ledger: ctx.stock.ledger,
    registry: ctx.stock.registry,
    log: ctx.log,
    metrics: ctx.metrics,
    config: ctx.config,
  };
}

/** The origin's own ledger reads, with `between` run right after each Redis snapshot (before MySQL is read). */
export function readingRedisThen(t: TestOrigin, between: () => Promise<void>): ReconcileDeps {
  const real = t.origin.ctx.stock.ledger;
  const ledger = Object.create(real) as typeof real;
  ledger.ledgerSnapshot = async (sale): Promise<LedgerSnapshot | null> => {
    const snapshot = await real.ledgerSnapshot(sale);
    await between();
    return snapshot;
  };
  return { db: t.origin.ctx.db, ledger };
}
