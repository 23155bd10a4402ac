/**
 * Admin operations on an activity: create, warm up, switch. MySQL stays the source of truth for
 * config and switches; Redis gets what the Lua script needs; the edge gets a pushed snapshot.
 */
import type { ActivitySwitch } from '../../contract/activity.js';
import { ContractError } from '../../contract/errors.js';
import { eligibilityField, loadSaleRules, type SaleRulesLoadDeps } from '../access/sale-rules.js';
import { insertDrawRecord, newDraw } from '../lottery/draw-store.js';
import type { OriginConfig } from '../platform/config.js';
import type { Db } from '../platform/db/pool.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { Sale } from '../redis/redis-store.js';
import type { StockWatch } from '../reservation/stock-watch.js';
import type { ActivityCatalog } from '../sale/catalog.js';
import {
  describeLayout,
  readReplicaLayout,
  type ReplicaLayout,
  type ReplicaLayoutDeps,
} from '../sale/replica-layout.js';
import type { SnapshotPublisher } from '../sale/snapshot-publisher.js';
import { hasSaleHistory } from './sale-history.js';
import { ActivityState } from '../sale/sale-status.js';
import { markWarmed } from '../sale/warmup-store.js';
import {
  insertActivity,
  requireActivity,
  saleOf,
  updateSettings,
  updateState,
  type LiveSetting,
} from '../sale/sale-store.js';
import type { ActivityPatch, CreateActivity } from '../sale/sale-schemas.js';

/**
 * What the operations use: MySQL; the sale's stock, access rules and replica layout in Redis; the
 * catalog a new sale goes into; the publisher that builds and pushes the edge's snapshot; the stock
 * watch whose lines a change resets.
 */
export type ActivityOperationsDeps = SaleRulesLoadDeps &
  ReplicaLayoutDeps & {
    db: Db;
    log: Logger;
    metrics: Pick<Metrics, 'adminChanges' | 'heldBackUnits'>;
    catalog: Pick<ActivityCatalog, 'remember'>;
    publisher: Pick<SnapshotPublisher, 'publish' | 'setSoldOut' | 'snapshot'>;
    stockWatch: Pick<StockWatch, 'forget'>;
    /** DRAW_SECRET: a lottery's seed; REDIS_WAIT_REPLICAS: whether an operator's pause clears the rule's. */
    config: Pick<OriginConfig, 'DRAW_SECRET' | 'REDIS_WAIT_REPLICAS'>;
  };

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
async function replicaRuleAtOpening(deps: ActivityOperationsDeps, sale: Sale, override: ReplicaOverride) {
  const layout = await readReplicaLayout(deps, sale);
  if (layout.stallsOnOneFailover.length === 0 || layout.acceptedBy !== null) return { layout, allowed: true };
  if (!override.acceptReplicaRisk) return { layout, allowed: false };
  await deps.replication.acceptReplicaRisk(sale, override.actor);
  deps.log.warn(
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

export async function createActivity(deps: ActivityOperationsDeps, input: CreateActivity) {
  // A lottery's seed is derived from DRAW_SECRET: only its nonce and commitment go into MySQL.
  const draw = input.admission === 'lottery' ? newDraw(deps.config.DRAW_SECRET, input.activityId) : undefined;
  await insertActivity(deps.db, input, draw && ((tx) => insertDrawRecord(tx, input.activityId, draw)));
  deps.catalog.remember({
    activityId: input.activityId,
    skuId: input.skuId,
    buckets: input.stockBuckets,
    shadow: input.shadow === true,
  });
  deps.log.info(
    { activityId: input.activityId, stock: input.stock, ...(input.shadow ? { shadow: true } : {}) },
    input.shadow ? 'shadow activity created (rehearsal: shadow tables, shadow tokens only)' : 'activity created',
  );
  deps.metrics.heldBackUnits.set({ activity: input.activityId }, input.stock - (input.initialRelease ?? input.stock));
  await deps.publisher.publish(input.activityId);
  return deps.publisher.snapshot(input.activityId);
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
  deps: ActivityOperationsDeps,
  activityId: string,
  override: ReplicaOverride = NO_OVERRIDE,
): Promise<WarmupResult> {
  const record = await requireActivity(deps.db, activityId);
  const { maxPerUser } = record.config;
  const sale = saleOf(record);
  // After the end (stopped, or endsAt passed — cleanup stops a sale) there is nothing to load: a
  // warm-up would only put a cleaned-up sale back in front of the consumers.
  if (record.state === ActivityState.STOPPED || Date.now() >= Date.parse(record.config.endsAt))
    throw new ContractError('conflict', `activity ${activityId} has ended; warm-up is only for a sale yet to end`);
  // The Stream may be gone with the rest (FLUSHALL): MySQL's history still forbids a fresh load.
  if (!(await deps.sales.isWarm(sale)) && (await hasSaleHistory(deps.db, sale)))
    throw new ContractError(
      'conflict',
      'this sale already sold (MySQL has orders) but Redis has no stock: run recover',
    );
  // The deny list and the eligibility rule are in the buckets before the script makes the sale warm.
  await loadSaleRules(deps, sale, record.config.eligibility);
  const loaded = await deps.sales.warmup(sale, { stock: record.available, state: record.state, maxPerUser });
  if (loaded.kind === 'has_history') {
    throw new ContractError('conflict', 'Redis has reservation history but no stock: run recover instead of warm-up');
  }
  const { layout, allowed } = await replicaRuleAtOpening(deps, sale, override);
  let state = record.state;
  if (!allowed && state === ActivityState.OPEN) {
    deps.log.error(
      { alert: 'replica_layout_unsafe', activityId, buckets: layout.stallsOnOneFailover },
      `warm-up paused the sale: ${describeLayout(layout)}; open it with ?acceptReplicaRisk=true to accept the risk`,
    );
    await changeActivity(deps, activityId, { state: ActivityState.PAUSED }, 'replica-check');
    await deps.replication.markReplicaPause(sale);
    state = ActivityState.PAUSED;
    // An operator's override recorded meanwhile (the admin warm-up racing the scheduled one): it
    // either sees the mark above and reopens, or recorded before this read and this reopens.
    const acceptedBy = await deps.replication.replicaRiskAcceptedBy(sale);
    if (acceptedBy !== null && (await deps.replication.takeReplicaPause(sale))) {
      await changeActivity(deps, activityId, { state: ActivityState.OPEN }, acceptedBy);
      state = ActivityState.OPEN;
    }
  } else if (override.acceptReplicaRisk && (await deps.replication.takeReplicaPause(sale))) {
    // Paused by an earlier warm-up for this very reason (the scheduled one may run first): the
    // operator's override opens it. A pause an operator made stays.
    await changeActivity(deps, activityId, { state: ActivityState.OPEN }, override.actor);
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
  deps.log.info(result, 'activity warmed');
  // Scheduled warm-up (WarmupJob) skips a sale an operator already warmed; a verified one stays verified.
  await markWarmed(deps.db, activityId);
  deps.stockWatch.forget(activityId);
  deps.publisher.setSoldOut(activityId, result.stock <= 0);
  // Awaited: the edge has the warmed sale when warm-up answers (a transition also published, unawaited).
  await deps.publisher.publish(activityId);
  return result;
}

/** open / paused / stopped: in force in the Lua script at once, at the edge via the push. */
export async function setState(
  deps: ActivityOperationsDeps,
  activityId: string,
  state: ActivitySwitch,
  actor = 'system',
) {
  return changeActivity(deps, activityId, { state }, actor);
}

/**
 * The live switches (docs/design.md §10): state, userRatePerSec, admissionRatePerSec, soldOutThreshold,
 * eligibility, maxPerUser. Written to MySQL with a version bump, the state, the eligibility rule and
 * the per-user limit also to Redis (the scripts read them: a purchase, a waiting-room turn, a lottery
 * entry and the draw), then the snapshot is pushed: in force at the edge within 1 s. Each change is logged with who
 * made it (`actor`, the authenticated operator's name: origin/operator/admin-routes.ts) and each
 * setting's old and new value.
 */
export async function changeActivity(
  deps: ActivityOperationsDeps,
  activityId: string,
  patch: ActivityPatch,
  actor: string,
  override: Pick<ReplicaOverride, 'acceptReplicaRisk'> = NO_OVERRIDE,
) {
  const before = await requireActivity(deps.db, activityId);
  // An operator's own pause: a later override warm-up must not reopen it as if it were the rule's.
  if (patch.state === ActivityState.PAUSED && actor !== 'replica-check' && deps.config.REDIS_WAIT_REPLICAS > 0)
    await deps.replication.takeReplicaPause(saleOf(before)).catch(() => false); // a pause never waits on this
  // Opening is where the replica rule applies (warm-up pauses a sale it would stall).
  if (patch.state === ActivityState.OPEN && before.state !== ActivityState.OPEN) {
    const { layout, allowed } = await replicaRuleAtOpening(deps, saleOf(before), { ...override, actor });
    if (!allowed)
      throw new ContractError(
        'conflict',
        `not opened: ${describeLayout(layout)}. Add replicas, or open it anyway with ?acceptReplicaRisk=true`,
      );
  }
  const { state, ...settings } = patch;
  await updateSettings(deps.db, activityId, settings);
  // Before the answer, in the field every decision reads: the rule binds every reservation after it.
  if (settings.eligibility !== undefined)
    await deps.access.setEligibility(saleOf(before), eligibilityField(settings.eligibility));
  if (settings.maxPerUser !== undefined) await deps.sales.setMaxPerUser(saleOf(before), settings.maxPerUser);
  if (state !== undefined) {
    await updateState(deps.db, activityId, state);
    await deps.sales.setState(saleOf(before), state);
  }
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  if (state !== undefined) changes.state = { from: before.state, to: state };
  for (const [name, to] of Object.entries(settings)) {
    changes[name] = { from: before.config[name as LiveSetting], to };
    deps.metrics.adminChanges.inc({ setting: name });
  }
  if (state !== undefined) deps.metrics.adminChanges.inc({ setting: 'state' });
  deps.log.info({ activityId, actor, changes }, 'activity changed');
  deps.stockWatch.forget(activityId);
  await deps.publisher.publish(activityId);
  return deps.publisher.snapshot(activityId);
}
