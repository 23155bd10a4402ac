/** Shared by the reconciliation race tests: a seam between the two snapshots, and failing checks in brief. */
import type { ReconcileDeps, Reconciliation } from '../../origin/recovery/reconcile.js';
import type { LedgerSnapshot } from '../../origin/redis/sale-ledger.js';
import type { TestOrigin } from './origin.js';

/** `name expected/actual` of every failing check. */
export const failingChecks = (rec: Reconciliation) =>
  rec.checks.filter((c) => !c.ok).map((c) => `${c.name} ${c.expected}/${c.actual}`);

/** The origin's own stock store, with `between` run right after each Redis snapshot (before MySQL is read). */
export function readingRedisThen(t: TestOrigin, between: () => Promise<void>): ReconcileDeps {
  const real = t.origin.ctx.stock;
  const ledger = Object.create(real.ledger) as typeof real.ledger;
  ledger.ledgerSnapshot = async (sale): Promise<LedgerSnapshot | null> => {
    const snapshot = await real.ledger.ledgerSnapshot(sale);
    await between();
    return snapshot;
  };
  return { db: t.origin.ctx.db, stock: Object.assign(Object.create(real) as typeof real, { ledger }) };
}
