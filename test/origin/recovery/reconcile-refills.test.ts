/**
 * Reconciliation while timed-out orders' units stream back to Redis (origin/recovery/reconcile.ts).
 * Redis is read first, MySQL after it: a refill the outbox worker applies and marks done between the
 * two reads, or one applied before the Redis read and marked done after the MySQL read, must still be
 * counted exactly once. The interleaving is placed by hand (jobs parked): the outbox worker runs
 * right after reconciliation's Redis snapshot, on the real stock store, Redis and MySQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OriginConfig } from '../../../origin/platform/config.js';
import { OutboxWorker } from '../../../origin/sale/outbox-worker.js';
import { TimeoutJob } from '../../../origin/orders/timeout-job.js';
import { reconcile } from '../../../origin/recovery/reconcile.js';
import { activityKeys } from '../../../origin/redis/keys.js';
import { count, reserveAll, users } from '../../helpers/lifecycle.js';
import { failingChecks, readingRedisThen, reconcileDeps } from '../../helpers/reconcile.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

const PARKED = {
  TIMEOUT_SCAN_MS: '3600000',
  OUTBOX_POLL_MS: '3600000',
  RECONCILE_INTERVAL_MS: '3600000',
};
const REDIS = 'redis.initial_minus_stock_equals_issued_minus_released_minus_refilled';
const CROSS = 'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked';

let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin({ ...PARKED, ORIGIN_ROLE: 'http' });
});
afterAll(async () => {
  await t?.stop();
});

const available = (activityId: string) =>
  count(t, 'SELECT available FROM seckill_stock WHERE activity_id = ?', [activityId]);
const pendingOutbox = (activityId: string) =>
  count(t, 'SELECT COUNT(*) FROM stock_sync_outbox WHERE activity_id = ? AND status = 0', [activityId]);

/** A sale of `stock` units, `sold` of them settled as orders (users 5000…). */
async function settledSale(opts: { stock: number; sold: number; stockBuckets?: number }) {
  const { activityId, skuId } = await t.sale({ stock: opts.stock, stockBuckets: opts.stockBuckets });
  const buyers = users(5000, opts.sold);
  expect((await reserveAll(t, activityId, buyers)).every((r) => r.status === 202)).toBe(true);
  const c = await startTestOrigin({ ...PARKED, ORIGIN_ROLE: 'consumers' }, t.db);
  await waitFor(
    () => count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
    (n) => n === opts.sold,
  );
  await c.stop();
  return { activityId, skuId, buyers };
}

/** The timeout job and outbox worker as the server builds them, from the origin's pieces (settings overridable). */
const timeoutJob = (config: OriginConfig = t.origin.parts.config) =>
  new TimeoutJob({ db: t.origin.parts.db, log: t.origin.parts.log, metrics: t.origin.parts.metrics, config });
const outboxWorker = (config: OriginConfig = t.origin.parts.config) => {
  const { db, catalog, redis: stock, publisher, log, metrics } = t.origin.parts;
  return new OutboxWorker({ db, catalog, sales: stock.sales, publisher, log, metrics, config });
};

const expire = (activityId: string, userIds: string[]) =>
  t.db.pool.query(
    `UPDATE seckill_order SET expire_at = NOW(3) - INTERVAL 1 SECOND WHERE activity_id = ? AND user_id IN (${userIds.join(',')})`,
    [activityId],
  );

/** As settledSale, then `expired` of the orders timed out in MySQL (their refills pending). */
async function saleWithTimeouts(opts: { stock: number; sold: number; expired: number; stockBuckets?: number }) {
  const { activityId, skuId, buyers } = await settledSale(opts);
  await expire(activityId, buyers.slice(0, opts.expired));
  expect(await timeoutJob().round()).toBe(false);
  expect(await available(activityId)).toBe(opts.stock - opts.sold + opts.expired);
  expect(await pendingOutbox(activityId)).toBe(opts.expired);
  return { activityId, skuId };
}

describe('reconciliation while refills are applied', () => {
  for (const stockBuckets of [1, 2]) {
    it(`a refill applied and marked done between the Redis and the MySQL read is counted once (${stockBuckets} bucket(s))`, async () => {
      const { activityId } = await saleWithTimeouts({ stock: 40, sold: 20, expired: 7, stockBuckets });
      let applied: Awaited<ReturnType<OutboxWorker['runOnce']>> | undefined;
      const rec = await reconcile(
        readingRedisThen(t, async () => {
          applied ??= await outboxWorker().runOnce();
        }),
        activityId,
      );
      // The interleaving happened: every refill went to Redis and was marked done after Redis was read.
      expect(applied).toEqual({ claimed: 7, refilled: 7, already: 0, notWarmed: 0 });
      expect(await pendingOutbox(activityId)).toBe(0);
      expect(failingChecks(rec)).toEqual([]);
      expect(rec.figures).toMatchObject({ available: 27, redisStock: 20, unsynced: 7 });
      // Quiet again: the same figures read without anything in between.
      const quiet = await reconcile(reconcileDeps(t), activityId);
      expect(failingChecks(quiet)).toEqual([]);
      expect(quiet.figures).toMatchObject({ available: 27, redisStock: 27, unsynced: 0 });
    });
  }

  it('a refill applied to Redis but not yet marked done (worker between its two steps) is counted once', async () => {
    const { activityId } = await saleWithTimeouts({ stock: 40, sold: 20, expired: 5 });
    const worker = outboxWorker();
    const claimed = await worker.claim();
    expect(claimed).toHaveLength(5);
    for (const row of claimed) expect((await worker.refill(row)).kind).toBe('refilled');
    expect(await pendingOutbox(activityId)).toBe(5);

    const rec = await reconcile(reconcileDeps(t), activityId);
    expect(failingChecks(rec)).toEqual([]);
    expect(rec.figures).toMatchObject({ available: 25, redisStock: 25, unsynced: 0 });
    for (const row of claimed) await worker.markDone(row);
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([]);
  });

  it('is exact on every read while timeouts and refills stream (the rehearsal shape)', async () => {
    const { activityId, buyers } = await settledSale({ stock: 1000, sold: 300 });
    await expire(activityId, buyers);
    // Small batches, so refills arrive a few at a time for as long as the reads run.
    const config = { ...t.origin.parts.config, TIMEOUT_BATCH_SIZE: 20, OUTBOX_BATCH_SIZE: 10 };
    let timing = true;
    let refilling = true;
    const timeouts = (async () => {
      const job = timeoutJob(config);
      while (await job.round());
      timing = false;
    })();
    const refills = (async () => {
      const worker = outboxWorker(config);
      for (;;) {
        const last = !timing; // every timeout committed before this round: an empty round means all applied
        if ((await worker.runOnce()).claimed === 0 && last) break;
      }
      refilling = false;
    })();
    const runs: string[][] = [];
    while (refilling) runs.push(failingChecks(await reconcile(reconcileDeps(t), activityId)));
    await Promise.all([timeouts, refills]);
    expect(await pendingOutbox(activityId)).toBe(0);
    const quiet = await reconcile(reconcileDeps(t), activityId);
    expect(quiet.figures).toMatchObject({ available: 1000, redisStock: 1000, refilledDb: 300, unsynced: 0 });
    expect(runs.length).toBeGreaterThan(3);
    expect(runs.filter((r) => r.length > 0)).toEqual([]);
  });

  it('still fails on a refill Redis got that MySQL never committed, and on one Redis forgot', async () => {
    const { activityId, skuId } = await saleWithTimeouts({ stock: 40, sold: 20, expired: 3 });
    const keys = activityKeys(activityId, skuId);
    expect(await outboxWorker().runOnce()).toMatchObject({ refilled: 3 });
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([]);

    // Over-selling risk: 2 units appear in Redis as the refill of an order that never timed out.
    const sale = await t.origin.parts.catalog.resolve(activityId);
    expect(
      (await t.origin.parts.redis.sales.refill(sale, { reservationId: 'never-timed-out', quantity: 2 })).kind,
    ).toBe('refilled');
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([`${CROSS} 23/25`]);
    await t.redis.decrby(keys.stock, 2);
    await t.redis.hdel(keys.refilled, 'never-timed-out');
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([]);

    // Redis keeps the units of a refill but forgot it made it (the outbox could apply it twice).
    const [forgotten] = await t.redis.hkeys(keys.refilled);
    await t.redis.hdel(keys.refilled, forgotten!);
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([`${REDIS} 17/18`, `${CROSS} 23/24`]);
  });
});
