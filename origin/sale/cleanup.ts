/**
 * Cleanup after a sale (docs/design.md §7): once the sale has ended, nothing is left to settle and the
 * reconciliation is clean, its Redis keys are set to expire after CLEANUP_RETENTION_SECONDS, the
 * settlement registry forgets it, and the edge is told the sale is stopped. Refuses (409) while
 * anything is unsettled: Stream entries pending or not yet delivered, outbox rows not applied,
 * orders still PENDING (their timeout would refill a sale being cleaned).
 */
import { ContractError } from '../../contract/errors.js';
import { setState, type ActivityOperationsDeps } from './operations.js';
import { ActivityState, requireActivity, saleOf } from './sale-store.js';
import type { OriginContext } from '../context.js';
import { reconcile } from '../recovery/reconcile.js';
import { openOrderWork } from '../orders/open-work.js';

/** What this module uses of the origin's context. */
export type CleanupDeps = ActivityOperationsDeps & Pick<OriginContext, 'config' | 'db' | 'log' | 'publisher' | 'stock'>;

export async function cleanup(ctx: CleanupDeps, activityId: string) {
  const record = await requireActivity(ctx.db, activityId);
  const ended = record.state === ActivityState.STOPPED || Date.now() >= Date.parse(record.config.endsAt);
  if (!ended) throw new ContractError('conflict', 'the sale has not ended: stop it or wait for its end first');
  const sale = saleOf(record);

  const info = await ctx.stock.streams.groupInfo(sale);
  if (info && (info.pending > 0 || info.lag > 0))
    throw new ContractError(
      'conflict',
      `settlement is not finished: ${info.pending} Stream entries pending, ${info.lag} not yet delivered`,
    );
  const open = await openOrderWork(ctx.db, activityId);
  if (Number(open.outbox) > 0)
    throw new ContractError('conflict', `${open.outbox} refills are not yet applied to Redis (outbox)`);
  if (Number(open.pending) > 0)
    throw new ContractError('conflict', `${open.pending} orders still wait for payment or timeout`);
  const rec = await reconcile({ db: ctx.db, ledger: ctx.stock.ledger, config: ctx.config }, activityId);
  if (!rec.ok) {
    const failing = rec.checks.filter((c) => !c.ok).map((c) => c.name);
    throw new ContractError('conflict', `reconciliation is not clean: ${failing.join(', ')}`);
  }

  if (record.state !== ActivityState.STOPPED) await setState(ctx, activityId, ActivityState.STOPPED);
  else await ctx.publisher.publish(activityId);
  const retention = ctx.config.CLEANUP_RETENTION_SECONDS;
  await ctx.stock.registry.expire(sale, retention);
  ctx.publisher.setSoldOut(activityId, false);
  ctx.log.info({ activityId, retentionSeconds: retention }, 'sale cleaned up');
  return { activityId, state: ActivityState.STOPPED, expiresInSeconds: retention, reconciliation: rec };
}
