/** The recovery services' deps from a test origin's own pieces, as origin/server.ts hands them. */
import type { FailoverRecoveryDeps } from '../../origin/recovery/failover-watch.js';
import type { RecoverDeps } from '../../origin/recovery/recover.js';
import type { TestOrigin } from './origin.js';

/** What recover (origin/recovery/recover.ts) uses. */
export function recoverDeps(t: TestOrigin): RecoverDeps {
  const { ctx } = t.origin;
  return {
    db: ctx.db,
    log: ctx.log,
    metrics: ctx.metrics,
    publisher: ctx.publisher,
    sales: ctx.stock.sales,
    recovery: ctx.stock.recovery,
    ledger: ctx.stock.ledger,
    saleRules: { db: ctx.db, access: ctx.stock.access },
    config: ctx.config,
  };
}

/** What the failover watch's recovering step (recoverAfterFailover) uses. */
export function failoverRecoveryDeps(t: TestOrigin): FailoverRecoveryDeps {
  const { stock } = t.origin.ctx;
  return { ...recoverDeps(t), recovery: stock.recovery, replication: stock.replication };
}
