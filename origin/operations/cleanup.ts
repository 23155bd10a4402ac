/**
 * Cleanup after a sale (docs/design.md §7): once the sale has ended, nothing is left to settle and the
 * reconciliation is clean, its Redis keys are set to expire after CLEANUP_RETENTION_SECONDS, the
 * settlement registry forgets it, and the edge is told the sale is stopped. Refuses (409) while
 * anything is unsettled: Stream entries pending or not yet delivered, outbox rows not applied,
 * orders still PENDING (their timeout would refill a sale being cleaned).
 */
import { ContractError } from '../../contract/errors.js';
import { setState, type ActivityOperationsDeps } from '../activity/operations.js';
import { requireActivity, saleOf } from '../activity/store.js';
import type { OriginContext } from '../context.js';
import { reconcile, type ReconcileDeps } from '../reconcile/reconcile.js';
import { one } from '../db/rows.js';
import { OrderStatus, OutboxStatus } from '../db/statuses.js';

/** What this module uses of the origin's context. */
export type CleanupDeps = ActivityOperationsDeps &
  ReconcileDeps &
  Pick<OriginContext, 'config' | 'db' | 'log' | 'publisher' | 'stock'>;

export async function cleanup(ctx: CleanupDeps, activityId: string) {
  const record = await requireActivity(ctx.db, activityId);
  const ended = record.state === 'stopped' || Date.now() >= Date.parse(record.config.endsAt);
  if (!ended) throw new ContractError('conflict', 'the sale has not ended: stop it or wait for its end first');
  const sale = saleOf(record);

  const info = await ctx.stock.streams.groupInfo(sale);
  if (info && (info.pending > 0 || info.lag > 0))
    throw new ContractError(
      'conflict',
      `settlement is not finished: ${info.pending} Stream entries pending, ${info.lag} not yet delivered`,
    );
  const open = (await one<{ outbox: number; pending: number }>(
    ctx.db.execute(
      `SELECT (SELECT COUNT(*) FROM stock_sync_outbox WHERE activity_id = ? AND status = ${OutboxStatus.PENDING}) AS outbox,
              (SELECT COUNT(*) FROM seckill_order WHERE activity_id = ? AND status = ${OrderStatus.PENDING}) AS pending`,
      [activityId, activityId],
    ),
  ))!;
  if (Number(open.outbox) > 0)
    throw new ContractError('conflict', `${open.outbox} refills are not yet applied to Redis (outbox)`);
  if (Number(open.pending) > 0)
    throw new ContractError('conflict', `${open.pending} orders still wait for payment or timeout`);
  const rec = await reconcile(ctx, activityId);
  if (!rec.ok) {
    const failing = rec.checks.filter((c) => !c.ok).map((c) => c.name);
    throw new ContractError('conflict', `reconciliation is not clean: ${failing.join(', ')}`);
  }

  if (record.state !== 'stopped') await setState(ctx, activityId, 'stopped');
  else await ctx.publisher.publish(activityId);
  const retention = ctx.config.CLEANUP_RETENTION_SECONDS;
  await ctx.stock.registry.expire(sale, retention);
  ctx.publisher.setSoldOut(activityId, false);
  ctx.log.info({ activityId, retentionSeconds: retention }, 'sale cleaned up');
  return { activityId, state: 'stopped' as const, expiresInSeconds: retention, reconciliation: rec };
}
