/**
 * Tranches (docs/design.md §10, the seeds: "don't release all the stock at once"): `initialRelease` puts
 * part of the stock on sale; `POST /admin/activities/:id/releases {"units"}` releases more.
 *
 * MySQL keeps the truth. A release is two steps, each idempotent:
 *   1. one transaction: `held_back -= N` (refused with 409 when N > held_back) + a
 *      seckill_stock_release row (StockReleaseStatus.PENDING);
 *   2. Redis gets the units (StockStore.releaseTranche, once per release id), then one transaction
 *      marks the row applied and adds N to `available`.
 * `available` only grows once Redis has the units, so warm-up (which loads `available`) and a
 * release can never count the same units twice, and the settlement's conditional UPDATE guards
 * held-back units like any other. The admin call runs step 2 at once; ReleaseJob retries rows a
 * crash or a cold Redis left pending (a sale not yet warmed gets its releases right after warm-up).
 */
import { ContractError } from '../../contract/errors.js';
import type { OriginContext } from '../context.js';
import { inTransaction, type Db } from '../db/pool.js';
import { affected, insertId, one, rows } from '../db/rows.js';
import { StockReleaseStatus } from '../db/statuses.js';
import { PeriodicJob } from '../jobs/periodic.js';
import { requireActivity } from './store.js';

/** A release's field in Redis's `tranches` hash (each bucket's share of it, added once). */
export const trancheId = (releaseId: string | number) => `release:${releaseId}`;

/** What this module uses of the origin's context. */
export type TrancheDeps = Pick<OriginContext, 'catalog' | 'config' | 'db' | 'log' | 'metrics' | 'publisher' | 'stock'>;

export interface ReleaseRow {
  id: string;
  activity_id: string;
  sku_id: string;
  units: number;
}

export interface ReleaseAnswer {
  /** Units of this release. */
  released: number;
  /** Units still held back after it. */
  heldBack: number;
  /** false: committed, waiting for Redis (the sale is not warm yet, or Redis failed); ReleaseJob finishes it. */
  applied: boolean;
}

export async function releaseUnits(
  ctx: TrancheDeps,
  activityId: string,
  units: number,
  actor: string,
): Promise<ReleaseAnswer> {
  const { config, state } = await requireActivity(ctx.db, activityId);
  if (state === 'stopped') throw new ContractError('conflict', `activity ${activityId} is stopped; nothing to release`);
  const { row, heldBack } = await inTransaction(ctx.db, async (tx) => {
    const stock = (await one<{ held_back: number }>(
      tx.execute('SELECT held_back FROM seckill_stock WHERE activity_id = ? AND sku_id = ? FOR UPDATE', [
        activityId,
        config.skuId,
      ]),
    ))!;
    const held = Number(stock.held_back);
    if (units > held) throw new ContractError('conflict', `only ${held} units are held back; cannot release ${units}`);
    await tx.execute('UPDATE seckill_stock SET held_back = held_back - ? WHERE activity_id = ? AND sku_id = ?', [
      units,
      activityId,
      config.skuId,
    ]);
    // attempts = 1: this call applies it right away; ReleaseJob takes it over after the lease.
    const id = await insertId(
      tx.execute(
        'INSERT INTO seckill_stock_release (activity_id, sku_id, units, actor, attempts) VALUES (?, ?, ?, ?, 1)',
        [activityId, config.skuId, units, actor],
      ),
    );
    const row: ReleaseRow = { id, activity_id: activityId, sku_id: config.skuId, units };
    return { row, heldBack: held - units };
  });
  ctx.log.info({ activityId, actor, change: { release: units, heldBack } }, 'activity changed: tranche released');
  ctx.metrics.adminChanges.inc({ setting: 'release' });
  ctx.metrics.heldBackUnits.set({ activity: activityId }, heldBack);
  const applied = await applyRelease(ctx, row).catch((err) => {
    ctx.log.warn({ activityId, releaseId: row.id, err: (err as Error).message }, 'release waits for Redis');
    return false;
  });
  return { released: units, heldBack, applied };
}

/** Step 2: Redis first (idempotent per release id), then MySQL marks it and adds the units, once. */
export async function applyRelease(ctx: TrancheDeps, row: ReleaseRow): Promise<boolean> {
  const activityId = String(row.activity_id);
  const sale = await ctx.catalog.resolve(activityId);
  const result = await ctx.stock.sales.releaseTranche(sale, { releaseId: trancheId(row.id), units: Number(row.units) });
  if (result.kind === 'not_warmed') return false;
  await inTransaction(ctx.db, async (tx) => {
    const marked = await affected(
      tx.execute(
        `UPDATE seckill_stock_release SET status = ${StockReleaseStatus.APPLIED}, updated_at = NOW(3)
          WHERE id = ? AND status = ${StockReleaseStatus.PENDING}`,
        [row.id],
      ),
    );
    if (marked === 1)
      await tx.execute('UPDATE seckill_stock SET available = available + ? WHERE activity_id = ? AND sku_id = ?', [
        row.units,
        sale.activityId,
        sale.skuId,
      ]);
  });
  // Units are back: clear the sold-out flag (a transition publishes), else publish the new figures.
  if (!ctx.publisher.setSoldOut(activityId, false)) await ctx.publisher.publish(activityId);
  return true;
}

/** Held back and committed-but-not-applied units of a sale: what is not on sale in Redis. */
export async function notReleased(db: Db, activityId: string) {
  const { PENDING, APPLIED } = StockReleaseStatus;
  const row = (await one<{ held_back: number; pending: number; applied: number }>(
    db.execute(
      `SELECT (SELECT COALESCE(SUM(held_back), 0) FROM seckill_stock WHERE activity_id = ?) AS held_back,
              (SELECT COALESCE(SUM(units), 0) FROM seckill_stock_release WHERE activity_id = ? AND status = ${PENDING}) AS pending,
              (SELECT COALESCE(SUM(units), 0) FROM seckill_stock_release WHERE activity_id = ? AND status = ${APPLIED}) AS applied`,
      [activityId, activityId, activityId],
    ),
  ))!;
  return { heldBack: Number(row.held_back), pending: Number(row.pending), applied: Number(row.applied) };
}

/** Finishes releases left pending: Redis was down, the origin died, or the sale was not warm yet. */
export class ReleaseJob extends PeriodicJob {
  constructor(private readonly ctx: TrancheDeps) {
    super('releases', ctx.config.OUTBOX_POLL_MS, ctx.log);
  }

  async round(): Promise<boolean> {
    const { OUTBOX_BATCH_SIZE: batch, OUTBOX_CLAIM_LEASE_MS: leaseMs } = this.ctx.config;
    const claimed = await inTransaction(this.ctx.db, async (tx) => {
      const due = await rows<ReleaseRow>(
        tx.query(
          `SELECT id, activity_id, sku_id, units FROM seckill_stock_release
            WHERE status = ${StockReleaseStatus.PENDING} AND (attempts = 0 OR updated_at < NOW(3) - INTERVAL ? SECOND)
            ORDER BY id LIMIT ${batch} FOR UPDATE SKIP LOCKED`,
          [leaseMs / 1000],
        ),
      );
      if (due.length > 0)
        await tx.query(
          `UPDATE seckill_stock_release SET attempts = attempts + 1, updated_at = NOW(3) WHERE id IN (${due
            .map(() => '?')
            .join(', ')})`,
          due.map((r) => r.id),
        );
      return due;
    });
    for (const row of claimed) await applyRelease(this.ctx, row);
    return false;
  }
}
