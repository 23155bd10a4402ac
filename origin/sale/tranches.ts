/**
 * Tranches (docs/design.md §10, the seeds: "don't release all the stock at once"): `initialRelease` puts
 * part of the stock on sale; `POST /admin/activities/:id/releases {"units"}` releases more.
 *
 * MySQL keeps the truth. A release is two steps, each idempotent:
 *   1. one transaction: `held_back -= N` (refused with 409 when N > held_back) + a
 *      seckill_stock_release row (StockReleaseStatus.PENDING);
 *   2. Redis gets the units (RedisStore.releaseTranche, once per release id), then one transaction
 *      marks the row applied and adds N to `available`.
 * `available` only grows once Redis has the units, so warm-up (which loads `available`) and a
 * release can never count the same units twice, and the settlement's conditional UPDATE guards
 * held-back units like any other. The admin call runs step 2 at once; ReleaseJob retries rows a
 * crash or a cold Redis left pending (a sale not yet warmed gets its releases right after warm-up).
 */
import { ContractError } from '../../contract/errors.js';
import type { OriginConfig } from '../platform/config.js';
import { inConsistentSnapshot, inTransaction, type Db } from '../platform/db/pool.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { SaleStock } from '../redis/sale-stock.js';
import type { ActivityCatalog } from './catalog.js';
import type { SnapshotPublisher } from './snapshot-publisher.js';
import { addReleasedUnits, heldBackOfActivity, lockHeldBack, reduceHeldBack } from '../orders/stock-row-store.js';
import {
  claimReleases,
  insertRelease,
  markReleaseApplied,
  releaseUnitTotals,
  type ReleaseRow,
} from './tranche-store.js';
import { PeriodicJob } from '../platform/periodic.js';
import { ActivityState } from './sale-status.js';
import { requireActivity } from './sale-store.js';

/** A release's field in Redis's `tranches` hash (each bucket's share of it, added once). */
export const trancheId = (releaseId: string | number) => `release:${releaseId}`;

/** Step 2 of a release: the sale's layout, Redis, MySQL, and the publisher that tells the edge. */
export interface ReleaseApplyDeps {
  db: Db;
  catalog: Pick<ActivityCatalog, 'resolve'>;
  sales: SaleStock;
  publisher: Pick<SnapshotPublisher, 'publish' | 'setSoldOut'>;
}

/** An operator's release (both steps), logged and counted. */
export interface TrancheDeps extends ReleaseApplyDeps {
  log: Logger;
  metrics: Pick<Metrics, 'adminChanges' | 'heldBackUnits'>;
}

/** The retry job: step 2 of the releases left pending, a batch per poll, each claimed for a lease. */
export interface ReleaseJobDeps extends ReleaseApplyDeps {
  log: Logger;
  config: Pick<OriginConfig, 'OUTBOX_POLL_MS' | 'OUTBOX_BATCH_SIZE' | 'OUTBOX_CLAIM_LEASE_MS'>;
}

export type { ReleaseRow };

export interface ReleaseAnswer {
  /** Units of this release. */
  released: number;
  /** Units still held back after it. */
  heldBack: number;
  /** false: committed, waiting for Redis (the sale is not warm yet, or Redis failed); ReleaseJob finishes it. */
  applied: boolean;
}

export async function releaseUnits(
  deps: TrancheDeps,
  activityId: string,
  units: number,
  actor: string,
): Promise<ReleaseAnswer> {
  const { config, state } = await requireActivity(deps.db, activityId);
  if (state === ActivityState.STOPPED)
    throw new ContractError('conflict', `activity ${activityId} is stopped; nothing to release`);
  const { row, heldBack } = await inTransaction(deps.db, async (tx) => {
    const sale = { activityId, skuId: config.skuId };
    const held = await lockHeldBack(tx, sale);
    if (units > held) throw new ContractError('conflict', `only ${held} units are held back; cannot release ${units}`);
    await reduceHeldBack(tx, sale, units);
    // attempts = 1: this call applies it right away; ReleaseJob takes it over after the lease.
    const id = await insertRelease(tx, sale, units, actor);
    const row: ReleaseRow = { id, activity_id: activityId, sku_id: config.skuId, units };
    return { row, heldBack: held - units };
  });
  deps.log.info({ activityId, actor, change: { release: units, heldBack } }, 'activity changed: tranche released');
  deps.metrics.adminChanges.inc({ setting: 'release' });
  deps.metrics.heldBackUnits.set({ activity: activityId }, heldBack);
  const applied = await applyRelease(deps, row).catch((err) => {
    deps.log.warn({ activityId, releaseId: row.id, err: (err as Error).message }, 'release waits for Redis');
    return false;
  });
  return { released: units, heldBack, applied };
}

/** Step 2: Redis first (idempotent per release id), then MySQL marks it and adds the units, once. */
export async function applyRelease(deps: ReleaseApplyDeps, row: ReleaseRow): Promise<boolean> {
  const activityId = String(row.activity_id);
  const sale = await deps.catalog.resolve(activityId);
  const result = await deps.sales.releaseTranche(sale, { releaseId: trancheId(row.id), units: Number(row.units) });
  if (result.kind === 'not_warmed') return false;
  await inTransaction(deps.db, async (tx) => {
    const marked = await markReleaseApplied(tx, row.id);
    if (marked === 1) await addReleasedUnits(tx, sale, row.units);
  });
  // Units are back: clear the sold-out flag (a transition publishes), else publish the new figures.
  if (!deps.publisher.setSoldOut(activityId, false)) await deps.publisher.publish(activityId);
  return true;
}

/** Held back and committed-but-not-applied units of a sale: what is not on sale in Redis. */
export async function notReleased(db: Db, activityId: string) {
  // One snapshot, as the one statement this was: a release moves units from held back to pending.
  return inConsistentSnapshot(db, async (tx) => {
    const heldBack = await heldBackOfActivity(tx, activityId);
    const { pending, applied } = await releaseUnitTotals(tx, activityId);
    return { heldBack, pending, applied };
  });
}

/** Finishes releases left pending: Redis was down, the origin died, or the sale was not warm yet. */
export class ReleaseJob extends PeriodicJob {
  constructor(private readonly deps: ReleaseJobDeps) {
    super('releases', deps.config.OUTBOX_POLL_MS, deps.log);
  }

  async round(): Promise<boolean> {
    const { OUTBOX_BATCH_SIZE: batch, OUTBOX_CLAIM_LEASE_MS: leaseMs } = this.deps.config;
    const claimed = await inTransaction(this.deps.db, (tx) => claimReleases(tx, batch, leaseMs));
    for (const row of claimed) await applyRelease(this.deps, row);
    return false;
  }
}
