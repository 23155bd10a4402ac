/**
 * Reconciles every warmed activity every RECONCILE_INTERVAL_MS (DESIGN §6). A mismatch sets the
 * `seckill_reconciliation_mismatches` gauge and logs an alert line (reconcile.ts does both).
 */
import { findActivity } from '../activity/store.js';
import type { OriginContext } from '../context.js';
import { reconcile } from '../reconcile/reconcile.js';
import { ACTIVITY_REGISTRY_KEY } from '../redis/keys.js';
import { PeriodicJob } from './periodic.js';

export class ReconcileJob extends PeriodicJob {
  constructor(private readonly ctx: OriginContext) {
    super('reconcile', ctx.config.RECONCILE_INTERVAL_MS, ctx.log);
  }

  async round(): Promise<boolean> {
    const registry = await this.ctx.redis.hgetall(ACTIVITY_REGISTRY_KEY);
    for (const activityId of Object.keys(registry)) {
      // The registry is shared by every origin on this Redis; an activity of another database is not ours.
      if (!(await findActivity(this.ctx.db, activityId))) continue;
      await reconcile(this.ctx, activityId).catch((err) =>
        this.ctx.log.warn({ activityId, err: (err as Error).message }, 'reconciliation failed to run'),
      );
    }
    return false;
  }
}
