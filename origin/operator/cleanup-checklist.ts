/**
 * The seeds' cleanup checklist ("remove the Redis temporary keys, delete the warm-up data, withdraw
 * the rate rules — make it a checklist and tick it item by item"), each item verified against the
 * real state, never remembered: the console ticks an item when this says it holds. The cleanup
 * itself is `POST /admin/activities/:id/cleanup` (cleanup.ts), which refuses until items 1-3 hold.
 */
import { ActivityState } from '../sale/sale-status.js';
import { requireActivity, saleOf } from '../sale/sale-store.js';
import { openOrderWork } from '../orders/open-work.js';
import { shadowRowsLeft } from '../sale/shadow-row-store.js';
import type { Db } from '../platform/db/pool.js';
import { reconcile, type ReconcileDeps } from '../recovery/reconcile.js';
import type { SaleRegistry } from '../redis/sale-registry.js';
import type { SaleStreams } from '../redis/sale-streams.js';
import type { SoldOutFlags } from '../sale/sold-out.js';
import { edgeActivity, type EdgeViewDeps } from '../watch/edge-view.js';

/** Each item's source: MySQL, the reconciliation, the sale's Streams and registry entry, the flag, the edge. */
export type CleanupChecklistDeps = ReconcileDeps &
  EdgeViewDeps & {
    db: Db;
    streams: SaleStreams;
    registry: SaleRegistry;
    soldOut: Pick<SoldOutFlags, 'has'>;
  };

export interface ChecklistItem {
  id:
    | 'ended'
    | 'settled'
    | 'reconciled'
    | 'warmup_removed'
    | 'redis_keys_expire'
    | 'rate_rules_removed'
    | 'shadow_rows_removed';
  label: string;
  ok: boolean;
  /** What was found, in words. */
  detail: string;
}

export async function cleanupChecklist(deps: CleanupChecklistDeps, activityId: string) {
  const record = await requireActivity(deps.db, activityId);
  const sale = saleOf(record);
  const ended = record.state === ActivityState.STOPPED || Date.now() >= Date.parse(record.config.endsAt);
  const [group, open, rec, registered, ttls, edge] = await Promise.all([
    deps.streams.groupInfo(sale),
    openOrderWork(deps.db, sale),
    reconcile(deps, activityId),
    deps.registry.isRegistered(activityId),
    deps.registry.keyTtls(sale),
    edgeActivity(deps, activityId),
  ]);
  const pending = group?.pending ?? 0;
  const lag = group?.lag ?? 0;
  const outbox = Number(open.outbox);
  const unpaid = Number(open.pending);
  const soldOutFlag = deps.soldOut.has(activityId);
  const lasting = ttls.filter((k) => k.ttlMs < 0);
  const longest = Math.max(0, ...ttls.map((k) => k.ttlMs));
  const failing = rec.checks.filter((c) => !c.ok).map((c) => c.name);

  const items: ChecklistItem[] = [
    {
      id: 'ended',
      label: 'The sale has ended',
      ok: ended,
      detail:
        record.state === ActivityState.STOPPED
          ? 'stopped'
          : ended
            ? 'past its end'
            : `still ${record.state}: stop it first`,
    },
    {
      id: 'settled',
      label: 'Nothing left to settle',
      ok: pending === 0 && lag === 0 && outbox === 0 && unpaid === 0,
      detail: `${pending} Stream entries pending, ${lag} undelivered, ${outbox} refills not in Redis, ${unpaid} orders awaiting payment`,
    },
    {
      id: 'reconciled',
      label: 'Reconciliation is clean',
      ok: rec.ok,
      detail: rec.ok ? `${rec.checks.length} equations hold` : `failing: ${failing.join(', ')}`,
    },
    {
      id: 'warmup_removed',
      label: 'Warm-up data removed (settlement registry, sold-out flag)',
      ok: !registered && !soldOutFlag,
      detail: `${registered ? 'still in' : 'not in'} the settlement registry; sold-out flag ${soldOutFlag ? 'set' : 'clear'}`,
    },
    {
      id: 'redis_keys_expire',
      label: 'Redis keys of the sale expire',
      ok: lasting.length === 0,
      detail:
        lasting.length > 0
          ? `${lasting.length} of ${ttls.length} keys never expire (e.g. ${lasting[0]!.key})`
          : ttls.length === 0
            ? 'no key left'
            : `${ttls.length} keys, all gone within ${Math.ceil(longest / 1000)} s`,
    },
    {
      id: 'rate_rules_removed',
      label: 'Rate rules withdrawn at the edge (it answers the sale as ended)',
      ok: edge.kind === 'seen' && edge.state === 'ended' && edge.version === record.config.version,
      detail:
        edge.kind === 'none'
          ? 'no EDGE_URL: cannot ask the edge'
          : edge.kind === 'failed'
            ? `the edge could not be asked: ${edge.error}`
            : `the edge serves version ${edge.version} (origin ${record.config.version}) as ${edge.state}`,
    },
  ];
  if (record.shadow) {
    // A shadow sale: once cleaned up, no key at all (not merely expiring) and no row of its buyers.
    const left = await shadowRowsLeft(deps.db, sale);
    const holding = Object.entries(left).filter(([, n]) => n > 0);
    items.push({
      id: 'shadow_rows_removed',
      label: 'Shadow sale: every shadow row and Redis key removed',
      ok: holding.length === 0 && ttls.length === 0 && !registered,
      detail:
        holding.length === 0 && ttls.length === 0
          ? 'no shadow row and no Redis key left'
          : `${holding.map(([t, n]) => `${n} rows in ${t}`).join(', ') || 'no rows'}; ${ttls.length} Redis keys left`,
    });
  }
  return { activityId, at: new Date().toISOString(), done: items.every((i) => i.ok), items };
}
