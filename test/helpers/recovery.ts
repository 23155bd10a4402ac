/** The recovery services' deps from a test origin's own pieces, as origin/server.ts hands them. */
import type { FailoverRecoveryDeps } from '../../origin/recovery/failover-recovery.js';
import type { RecoverDeps } from '../../origin/recovery/recover.js';
import type { TestOrigin } from './origin.js';

/** What recover (origin/recovery/recover.ts) uses. */
export function recoverDeps(t: TestOrigin): RecoverDeps {
  const { parts } = t.origin;
  return {
    db: parts.db,
    log: parts.log,
    metrics: parts.metrics,
    publisher: parts.publisher,
    sales: parts.redis.sales,
    recovery: parts.redis.recovery,
    ledger: parts.redis.ledger,
    saleRules: { db: parts.db, access: parts.redis.access },
    config: parts.config,
  };
}

/** What the failover watch's recovering step (recoverAfterFailover) uses. */
export function failoverRecoveryDeps(t: TestOrigin): FailoverRecoveryDeps {
  const { redis: stock } = t.origin.parts;
  return { ...recoverDeps(t), recovery: stock.recovery, replication: stock.replication };
}
