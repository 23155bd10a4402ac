/**
 * Admin operations on an activity: create, warm up, switch. MySQL stays the source of truth for
 * config and switches; Redis gets what the Lua script needs; the edge gets a pushed snapshot.
 */
import type { ActivitySwitch } from '../../contract/activity.js';
import { ContractError } from '../../contract/errors.js';
import { eligibilityField, loadSaleRules } from '../access/sale-rules.js';
import type { OriginContext } from '../context.js';
import { newDraw } from '../lottery/draw-store.js';
import type { Sale } from '../redis/stock-store.js';
import { describeLayout, readReplicaLayout, type ReplicaLayout } from './replica-layout.js';
import { hasSaleHistory } from './sale-history.js';
import { ActivityState } from './sale-status.js';
import { markWarmed } from './warmup-store.js';
import {
  insertActivity,
  requireActivity,
  saleOf,
  updateSettings,
  updateState,
  type ActivityPatch,
  type CreateActivity,
  type LiveSetting,
} from './sale-store.js';

/** What this module uses of the origin's context. */
export type ActivityOperationsDeps = Pick<
  OriginContext,
  'catalog' | 'config' | 'db' | 'log' | 'metrics' | 'publisher' | 'snapshot' | 'stock' | 'stockWatch'
>;

/**
 * The operator's override of the replica rule (sale/replica-layout.ts) on a warm-up or an open:
 * `?acceptReplicaRisk=true`. Recorded on the sale with who gave it (the authenticated operator), so the
 * scheduled verification and later opens do not ask again.
 */
export interface ReplicaOverride {
  acceptReplicaRisk: boolean;
  actor: string;
}

const NO_OVERRIDE: ReplicaOverride = { acceptReplicaRisk: false, actor: 'system' };

/**
 * The replica rule at opening: the layout, with the override recorded when one is given and needed.
 * `allowed`: the sale may open (nothing stalls on one failover, or an operator accepted it).
 */
async function replicaRuleAtOpening(ctx: ActivityOperationsDeps, sale: Sale, override: ReplicaOverride) {
  const layout = await readReplicaLayout(ctx, sale);
  if (layout.stallsOnOneFailover.length === 0 || layout.acceptedBy !== null) return { layout, allowed: true };
  if (!override.acceptReplicaRisk) return { layout, allowed: false };
  await ctx.stock.replication.acceptReplicaRisk(sale, override.actor);
  ctx.log.warn(
    { activityId: sale.activityId, actor: override.actor, buckets: layout.stallsOnOneFailover },
    `replica risk accepted by the operator: ${describeLayout(layout)}`,
  );
  return { layout: { ...layout, acceptedBy: override.actor }, allowed: true };
}

/** What a warm-up answer says of the replica rule. */
const replicaSummary = (layout: ReplicaLayout, allowed: boolean) => ({
  ...layout,
  opens: allowed,
  verdict: describeLayout(layout),
});

export async function createActivity(
  ctx: ActivityOperationsDeps & Pick<OriginContext, 'config'>,
  input: CreateActivity,
) {
  // A lottery's seed is derived from DRAW_SECRET: only its nonce and commitment go into MySQL.
  const draw = input.admission === 'lottery' ? newDraw(ctx.config.DRAW_SECRET, input.activityId) : undefined;
  await insertActivity(ctx.db, input, draw);
  ctx.catalog.remember({ activityId: input.activityId, skuId: input.skuId, buckets: input.stockBuckets });
  ctx.log.info({ activityId: input.activityId, stock: input.stock }, 'activity created');
  ctx.metrics.heldBackUnits.set({ activity: input.activityId }, input.stock - (input.initialRelease ?? input.stock));
  await ctx.publisher.publish(input.activityId);
  return ctx.snapshot(input.activityId);
}

export interface WarmupResult {
  activityId: string;
  stock: number;
  holders: number;
  state: ActivitySwitch;
  /** false when the activity was already warm: nothing was reset. */
  loaded: boolean;
  /** With REDIS_WAIT_REPLICAS > 0, the replica rule: the layout read, whether the sale may open, and why. */
  replicas?: ReturnType<typeof replicaSummary>;
}

/**
 * Loads stock and switches into Redis from MySQL. Never resets a sale in progress. With
 * REDIS_WAIT_REPLICAS > 0 and a layout where one failover would stall a bucket, an open sale is
 * paused (it does not open) unless `override` accepts the risk; the answer's `replicas` says which.
 */
export async function warmup(
  ctx: ActivityOperationsDeps,
  activityId: string,
  override: ReplicaOverride = NO_OVERRIDE,
): Promise<WarmupResult> {
  const record = await requireActivity(ctx.db, activityId);
  const { skuId, maxPerUser } = record.config;
  const sale = saleOf(record);
  // After the end (stopped, or endsAt passed — cleanup stops a sale) there is nothing to load: a
  // warm-up would only put a cleaned-up sale back in front of the consumers.
  if (record.state === ActivityState.STOPPED || Date.now() >= Date.parse(record.config.endsAt))
    throw new ContractError('conflict', `activity ${activityId} has ended; warm-up is only for a sale yet to end`);
  // The Stream may be gone with the rest (FLUSHALL): MySQL's history still forbids a fresh load.
  if (!(await ctx.stock.sales.isWarm(sale)) && (await hasSaleHistory(ctx.db, activityId)))
    throw new ContractError(
      'conflict',
      'this sale already sold (MySQL has orders) but Redis has no stock: run recover',
    );
  // The deny list and the eligibility rule are in the buckets before the script makes the sale warm.
  await loadSaleRules(ctx, sale, record.config.eligibility);
  const loaded = await ctx.stock.sales.warmup(sale, { stock: record.available, state: record.state, maxPerUser });
  if (loaded.kind === 'has_history') {
    throw new ContractError('conflict', 'Redis has reservation history but no stock: run recover instead of warm-up');
  }
  const { layout, allowed } = await replicaRuleAtOpening(ctx, sale, override);
  let state = record.state;
  if (!allowed && state === ActivityState.OPEN) {
    ctx.log.error(
      { alert: 'replica_layout_unsafe', activityId, buckets: layout.stallsOnOneFailover },
      `warm-up paused the sale: ${describeLayout(layout)}; open it with ?acceptReplicaRisk=true to accept the risk`,
    );
    await changeActivity(ctx, activityId, { state: ActivityState.PAUSED }, 'replica-check');
    await ctx.stock.replication.markReplicaPause(sale);
    state = ActivityState.PAUSED;
    // An operator's override recorded meanwhile (the admin warm-up racing the scheduled one): it
    // either sees the mark above and reopens, or recorded before this read and this reopens.
    const acceptedBy = await ctx.stock.replication.replicaRiskAcceptedBy(sale);
    if (acceptedBy !== null && (await ctx.stock.replication.takeReplicaPause(sale))) {
      await changeActivity(ctx, activityId, { state: ActivityState.OPEN }, acceptedBy);
      state = ActivityState.OPEN;
    }
  } else if (override.acceptReplicaRisk && (await ctx.stock.replication.takeReplicaPause(sale))) {
    // Paused by an earlier warm-up for this very reason (the scheduled one may run first): the
    // operator's override opens it. A pause an operator made stays.
    await changeActivity(ctx, activityId, { state: ActivityState.OPEN }, override.actor);
    state = ActivityState.OPEN;
  }
  const result = {
    activityId,
    stock: loaded.stock,
    holders: loaded.holders,
    state,
    loaded: loaded.kind === 'loaded',
    // Only where reservations wait for replicas: otherwise the rule does not apply (the old body).
    ...(layout.waitReplicas > 0 && { replicas: replicaSummary(layout, allowed) }),
  };
  ctx.log.info(result, 'activity warmed');
  // Scheduled warm-up (WarmupJob) skips a sale an operator already warmed; a verified one stays verified.
  await markWarmed(ctx.db, activityId);
  ctx.stockWatch.forget(activityId);
  ctx.publisher.setSoldOut(activityId, result.stock <= 0);
  // Awaited: the edge has the warmed sale when warm-up answers (a transition also published, unawaited).
  await ctx.publisher.publish(activityId);
  return result;
}

/** open / paused / stopped: in force in the Lua script at once, at the edge via the push. */
export async function setState(
  ctx: ActivityOperationsDeps,
  activityId: string,
  state: ActivitySwitch,
  actor = 'system',
) {
  return changeActivity(ctx, activityId, { state }, actor);
}

/**
 * The live switches (docs/design.md §10): state, userRatePerSec, admissionRatePerSec, soldOutThreshold,
 * eligibility. Written to MySQL with a version bump, the state also to Redis (the Lua script reads
 * it), then the snapshot is pushed: in force at the edge within 1 s. Each change is logged with who
 * made it (`actor`, the authenticated operator's name: origin/sale/admin-routes.ts) and each
 * setting's old and new value.
 */
export async function changeActivity(
  ctx: ActivityOperationsDeps,
  activityId: string,
  patch: ActivityPatch,
  actor: string,
  override: Pick<ReplicaOverride, 'acceptReplicaRisk'> = NO_OVERRIDE,
) {
  const before = await requireActivity(ctx.db, activityId);
  // An operator's own pause: a later override warm-up must not reopen it as if it were the rule's.
  if (patch.state === ActivityState.PAUSED && actor !== 'replica-check' && ctx.config.REDIS_WAIT_REPLICAS > 0)
    await ctx.stock.replication.takeReplicaPause(saleOf(before)).catch(() => false); // a pause never waits on this
  // Opening is where the replica rule applies (warm-up pauses a sale it would stall).
  if (patch.state === ActivityState.OPEN && before.state !== ActivityState.OPEN) {
    const { layout, allowed } = await replicaRuleAtOpening(ctx, saleOf(before), { ...override, actor });
    if (!allowed)
      throw new ContractError(
        'conflict',
        `not opened: ${describeLayout(layout)}. Add replicas, or open it anyway with ?acceptReplicaRisk=true`,
      );
  }
  const { state, ...settings } = patch;
  await updateSettings(ctx.db, activityId, settings);
  // Before the answer, in the field every decision reads: the rule binds every reservation after it.
  if (settings.eligibility !== undefined)
    await ctx.stock.access.setEligibility(saleOf(before), eligibilityField(settings.eligibility));
  if (state !== undefined) {
    await updateState(ctx.db, activityId, state);
    await ctx.stock.sales.setState(saleOf(before), state);
  }
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  if (state !== undefined) changes.state = { from: before.state, to: state };
  for (const [name, to] of Object.entries(settings)) {
    changes[name] = { from: before.config[name as LiveSetting], to };
    ctx.metrics.adminChanges.inc({ setting: name });
  }
  if (state !== undefined) ctx.metrics.adminChanges.inc({ setting: 'state' });
  ctx.log.info({ activityId, actor, changes }, 'activity changed');
  ctx.stockWatch.forget(activityId);
  await ctx.publisher.publish(activityId);
  return ctx.snapshot(activityId);
}
