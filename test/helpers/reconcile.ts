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
  return { db: t.origin.parts.db, ledger: t.origin.parts.redis.ledger, config: t.origin.parts.config };
}

/** What the periodic reconciliation uses, from the test origin's own pieces. */
export function reconcileJobDeps(t: TestOrigin): ReconcileJobDeps {
  const { parts } = t.origin;
  return {
    db: parts.db,
    ledger: parts.redis.ledger,
    registry: parts.redis.registry,
    log: parts.log,
    metrics: parts.metrics,
    config: parts.config,
  };
}

/** The origin's own ledger reads, with `between` run right after each Redis snapshot (before MySQL is read). */
export function readingRedisThen(t: TestOrigin, between: () => Promise<void>): ReconcileDeps {
  const real = t.origin.parts.redis.ledger;
  const ledger = Object.create(real) as typeof real;
  ledger.ledgerSnapshot = async (sale): Promise<LedgerSnapshot | null> => {
    const snapshot = await real.ledgerSnapshot(sale);
    await between();
    return snapshot;
  };
  return { db: t.origin.parts.db, ledger };
}
