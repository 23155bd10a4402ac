/**
 * Reconciliation while held-back units are released (docs/design.md §10 tranches, origin/sale/tranches.ts).
 * A release gives Redis the units first (recorded in the `tranches` hash in the same script), then
 * MySQL marks it applied and adds the units to `available`; reconciliation reads Redis first and
 * MySQL after it. A release applied between the two reads, or one Redis got before its read that
 * MySQL marks after its read, must still be counted exactly once. The interleaving is placed by
 * hand on the real stock store, Redis and MySQL. Recover rebuilds `tranches` with the stock, so the
 * hash stays what the stock holds of tranches.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyRelease,
  releaseUnits,
  trancheId,
  type ReleaseRow,
  type TrancheDeps,
} from '../../../origin/sale/tranches.js';
import { recover } from '../../../origin/recovery/recover.js';
import { reconcile } from '../../../origin/recovery/reconcile.js';
import { activityKeys } from '../../../origin/redis/keys.js';
import { uniqueId } from '../../helpers/ids.js';
import { count, reserveAll, users } from '../../helpers/lifecycle.js';
import { failingChecks, readingRedisThen, reconcileDeps } from '../../helpers/reconcile.js';
import { startTestOrigin, type TestOrigin } from '../../helpers/origin.js';
import { recoverDeps } from '../../helpers/recovery.js';

const PARKED = {
  ORIGIN_ROLE: 'http',
  TIMEOUT_SCAN_MS: '3600000',
  OUTBOX_POLL_MS: '3600000', // ReleaseJob too
  RECONCILE_INTERVAL_MS: '3600000',
  FAILOVER_POLL_MS: '3600000',
};
const REDIS = 'redis.initial_minus_stock_equals_issued_minus_released_minus_refilled';
const CROSS = 'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked';
const APPLIED = 'redis.applied_releases_in_redis';

let t: TestOrigin;
const sales: { activityId: string; skuId: string }[] = [];
beforeAll(async () => {
  t = await startTestOrigin(PARKED);
});
afterAll(async () => {
  for (const s of sales) {
    const keys = await t.redis.keys(`sk:{${s.activityId}:${s.skuId}[:}]*`);
    if (keys.length) await t.redis.del(...keys);
  }
  await t?.stop();
});

/** A warmed sale of `stock` units, `onSale` of them released at the start, `reserved` reserved (not settled). */
async function trancheSale(opts: { stock: number; onSale: number; reserved: number; stockBuckets?: number }) {
  const activityId = uniqueId();
  const skuId = uniqueId();
  const now = Date.now();
  const created = await t.admin('POST', '/admin/activities', {
    activityId,
    skuId,
    title: `tranches ${activityId}`,
    stock: opts.stock,
    initialRelease: opts.onSale,
    startsAt: new Date(now - 1000).toISOString(),
    endsAt: new Date(now + 3_600_000).toISOString(),
    maxPerUser: 1,
    paymentTimeoutSeconds: 900,
    ...(opts.stockBuckets ? { stockBuckets: opts.stockBuckets } : {}),
  });
  expect(created.status, await created.clone().text()).toBe(201);
  sales.push({ activityId, skuId });
  expect((await t.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(200);
  expect((await reserveAll(t, activityId, users(9000, opts.reserved))).every((r) => r.status === 202)).toBe(true);
  const sale = await t.origin.parts.catalog.resolve(activityId);
  expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([]);
  return { activityId, skuId, sale };
}

/** The release service as the origin builds it, on the test origin's parts (`sales`: its Redis). */
function tranches(sales = t.origin.parts.redis.sales): TrancheDeps {
  const { db, log, metrics, catalog, publisher } = t.origin.parts;
  return { db, log, metrics, catalog, publisher, sales };
}

/** Step 1 of a release only (held_back −= units, a pending row): Redis refuses, as when it is down. */
async function commitRelease(activityId: string, units: number): Promise<ReleaseRow> {
  const real = t.origin.parts.redis.sales;
  const down = Object.create(real) as typeof real;
  down.releaseTranche = () => Promise.reject(new Error('test: Redis down'));
  expect(await releaseUnits(tranches(down), activityId, units, 'test')).toMatchObject({
    applied: false,
  });
  const [rows] = (await t.db.pool.query(
    'SELECT id, activity_id, sku_id, units FROM seckill_stock_release WHERE activity_id = ? AND status = 0',
    [activityId],
  )) as unknown as [ReleaseRow[]];
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

const available = (activityId: string) =>
  count(t, 'SELECT available FROM seckill_stock WHERE activity_id = ?', [activityId]);

describe('reconciliation while tranches are released', () => {
  for (const stockBuckets of [1, 3]) {
    it(`a release applied to Redis and marked applied between the Redis and the MySQL read is counted once (${stockBuckets} bucket(s))`, async () => {
      const { activityId } = await trancheSale({ stock: 40, onSale: 20, reserved: 5, stockBuckets });
      const row = await commitRelease(activityId, 12);
      expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([]);
      let applied: boolean | undefined;
      const rec = await reconcile(
        readingRedisThen(t, async () => {
          applied ??= await applyRelease(tranches(), row);
        }),
        activityId,
      );
      // The interleaving happened: MySQL (read second) has the release applied.
      expect(applied).toBe(true);
      expect(await available(activityId)).toBe(32);
      expect(failingChecks(rec)).toEqual([]);
      expect(rec.figures).toMatchObject({ available: 32, redisStock: 15, tranchesRedis: 0, tranchesApplied: 12 });
      const quiet = await reconcile(reconcileDeps(t), activityId);
      expect(failingChecks(quiet)).toEqual([]);
      expect(quiet.figures).toMatchObject({ available: 32, redisStock: 27, tranchesRedis: 12, tranchesApplied: 12 });
    });
  }

  it('a release Redis got before its read, marked applied after the MySQL read, is counted once', async () => {
    const { activityId, sale } = await trancheSale({ stock: 40, onSale: 20, reserved: 5 });
    const row = await commitRelease(activityId, 12);
    // applyRelease between its two steps: Redis has the units, MySQL still has the release pending.
    expect(
      await t.origin.parts.redis.sales.releaseTranche(sale, { releaseId: trancheId(row.id), units: 12 }),
    ).toMatchObject({
      kind: 'refilled',
    });
    const rec = await reconcile(reconcileDeps(t), activityId);
    expect(failingChecks(rec)).toEqual([]);
    expect(rec.figures).toMatchObject({ available: 20, pendingReleases: 12, redisStock: 27, tranchesRedis: 12 });
    expect(await applyRelease(tranches(), row)).toBe(true);
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([]);
  });

  it('is exact on every read while releases stream in', async () => {
    const { activityId } = await trancheSale({ stock: 120, onSale: 20, reserved: 10, stockBuckets: 2 });
    let releasing = true;
    const releases = (async () => {
      for (let i = 0; i < 50; i++) await releaseUnits(tranches(), activityId, 2, 'test');
      releasing = false;
    })();
    const runs: string[][] = [];
    while (releasing) runs.push(failingChecks(await reconcile(reconcileDeps(t), activityId)));
    await releases;
    expect(runs.length).toBeGreaterThan(3);
    expect(runs.filter((r) => r.length > 0)).toEqual([]);
    const quiet = await reconcile(reconcileDeps(t), activityId);
    expect(failingChecks(quiet)).toEqual([]);
    expect(quiet.figures).toMatchObject({ available: 120, heldBack: 0, redisStock: 110, tranchesRedis: 100 });
  });

  it('still fails on a release MySQL applied that Redis never got, and on tranche units MySQL never released', async () => {
    const { activityId, skuId } = await trancheSale({ stock: 40, onSale: 20, reserved: 5 });
    const keys = activityKeys(activityId, skuId);
    const row = await commitRelease(activityId, 10);
    // Under-selling: MySQL marks the release applied (available += 10) though Redis never had it.
    await t.db.pool.query('UPDATE seckill_stock_release SET status = 1 WHERE id = ?', [row.id]);
    await t.db.pool.query('UPDATE seckill_stock SET available = available + 10 WHERE activity_id = ?', [activityId]);
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([`${APPLIED} 10/0`]);
    await t.db.pool.query('UPDATE seckill_stock_release SET status = 0 WHERE id = ?', [row.id]);
    await t.db.pool.query('UPDATE seckill_stock SET available = available - 10 WHERE activity_id = ?', [activityId]);
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([]);

    // Over-selling risk: Redis records 3 units of a release MySQL has no row for, and sells them.
    await t.redis.hset(keys.tranches, 'release:0', 3);
    await t.redis.incrby(keys.stock, 3);
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([`${REDIS} 2/5`, `${CROSS} 20/23`]);
  });

  it('recover rebuilds `tranches` with the stock: applied releases in it, a pending one left for ReleaseJob', async () => {
    const { activityId, skuId, sale } = await trancheSale({ stock: 40, onSale: 20, reserved: 5 });
    const keys = activityKeys(activityId, skuId);
    expect(await releaseUnits(tranches(), activityId, 6, 'test')).toMatchObject({ applied: true });
    const pending = await commitRelease(activityId, 4);
    // Redis got the pending release's units before it lost the stock; MySQL has it pending.
    expect(
      await t.origin.parts.redis.sales.releaseTranche(sale, { releaseId: trancheId(pending.id), units: 4 }),
    ).toMatchObject({ kind: 'refilled' });
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([]);
    await t.redis.del(keys.stock);

    expect(await recover(recoverDeps(t), activityId)).toMatchObject({ stock: 21, unsettled: 5 });
    const appliedId = await count(t, 'SELECT id FROM seckill_stock_release WHERE activity_id = ? AND status = 1', [
      activityId,
    ]);
    expect(await t.redis.hgetall(keys.tranches)).toEqual({ [trancheId(appliedId)]: '6' });
    const recovered = await reconcile(reconcileDeps(t), activityId);
    expect(failingChecks(recovered)).toEqual([]);
    expect(recovered.figures).toMatchObject({ redisStock: 21, tranchesRedis: 6, tranchesApplied: 6 });
    // ReleaseJob's retry puts the pending release's units on sale: the stock that held them is gone.
    expect(await applyRelease(tranches(), pending)).toBe(true);
    expect(await t.redis.get(keys.stock)).toBe('25');
    const after = await reconcile(reconcileDeps(t), activityId);
    expect(failingChecks(after)).toEqual([]);
    expect(after.figures).toMatchObject({ available: 30, redisStock: 25, tranchesRedis: 10, tranchesApplied: 10 });
  });
});
