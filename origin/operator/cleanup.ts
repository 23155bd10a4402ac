/**
 * Cleanup after a sale (docs/design.md §7): once the sale has ended, nothing is left to settle and the
 * reconciliation is clean, its Redis keys are set to expire after CLEANUP_RETENTION_SECONDS, the
 * settlement registry forgets it, and the edge is told the sale is stopped. Refuses (409) while
 * anything is unsettled: Stream entries pending or not yet delivered, outbox rows not applied,
 * orders still PENDING (their timeout would refill a sale being cleaned).
 */
import { ContractError } from '../../contract/errors.js';
import { setState, type ActivityOperationsDeps } from './operations.js';
import { ActivityState } from '../sale/sale-status.js';
import { requireActivity, saleOf } from '../sale/sale-store.js';
import { reconcile, type ReconcileDeps } from '../recovery/reconcile.js';
import { openOrderWork } from '../orders/open-work.js';
import { removeShadowRows } from '../sale/shadow-row-store.js';
import type { OriginConfig } from '../platform/config.js';
import type { SaleRegistry } from '../redis/sale-registry.js';
import type { SaleStreams } from '../redis/sale-streams.js';

/** The stop (operations.ts), the reconciliation, the sale's Streams and registry entry, the retention. */
export type CleanupDeps = ActivityOperationsDeps &
  ReconcileDeps & {
    streams: SaleStreams;
    registry: SaleRegistry;
    config: Pick<OriginConfig, 'CLEANUP_RETENTION_SECONDS'>;
  };

export async function cleanup(deps: CleanupDeps, activityId: string) {
  const record = await requireActivity(deps.db, activityId);
  const ended = record.state === ActivityState.STOPPED || Date.now() >= Date.parse(record.config.endsAt);
  if (!ended) throw new ContractError('conflict', 'the sale has not ended: stop it or wait for its end first');
  const sale = saleOf(record);

  const info = await deps.streams.groupInfo(sale);
  if (info && (info.pending > 0 || info.lag > 0))
    throw new ContractError(
      'conflict',
      `settlement is not finished: ${info.pending} Stream entries pending, ${info.lag} not yet delivered`,
    );
  const open = await openOrderWork(deps.db, sale);
  if (Number(open.outbox) > 0)
    throw new ContractError('conflict', `${open.outbox} refills are not yet applied to Redis (outbox)`);
  if (Number(open.pending) > 0)
    throw new ContractError('conflict', `${open.pending} orders still wait for payment or timeout`);
  const rec = await reconcile(deps, activityId);
  if (!rec.ok) {
    const failing = rec.checks.filter((c) => !c.ok).map((c) => c.name);
    throw new ContractError('conflict', `reconciliation is not clean: ${failing.join(', ')}`);
  }

  if (record.state !== ActivityState.STOPPED) await setState(deps, activityId, ActivityState.STOPPED);
  else await deps.publisher.publish(activityId);
  deps.publisher.setSoldOut(activityId, false);
  if (record.shadow) {
    // A rehearsal leaves nothing behind: its keys deleted now, its rows gone (shadow-row-store.ts).
    await deps.registry.remove(sale);
    const removed = await removeShadowRows(deps.db, sale);
    deps.log.info({ activityId, removed }, 'shadow sale cleaned up: keys deleted, shadow rows removed');
    return { activityId, state: ActivityState.STOPPED, shadow: true, removed, reconciliation: rec };
  }
  const retention = deps.config.CLEANUP_RETENTION_SECONDS;
  await deps.registry.expire(sale, retention);
  deps.log.info({ activityId, retentionSeconds: retention }, 'sale cleaned up');
  return { activityId, state: ActivityState.STOPPED, expiresInSeconds: retention, reconciliation: rec };
}
