/**
 * Reconciliation while settlement gives reservations up (origin/recovery/reconcile.ts). Redis is
 * read first, MySQL after it; a dead letter's compensation gives units back to Redis
 * (lua/release-3.lua, recorded in `released`) and only then writes `restocked` in MySQL. A
 * compensation made between the two reads, or one made before the Redis read whose `restocked` is
 * written after the MySQL read, must still be counted exactly once. The interleaving is placed by
 * hand on the real stock store, Redis and MySQL: no consumer runs, settlement's own functions
 * (origin/settlement/dead-lettering.ts) are called on the reservations in the Stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../../origin/recovery/reconcile.js';
import { activityKeys } from '../../../origin/redis/keys.js';
import type { ReservationEvent } from '../../../origin/redis/reservation-event.js';
import { compensate, deadLetter, recordDeadLetter } from '../../../origin/settlement/dead-lettering.js';
import { count, reserveAll, users } from '../../helpers/lifecycle.js';
import { failingChecks, readingRedisThen, reconcileDeps } from '../../helpers/reconcile.js';
import { startTestOrigin, type TestOrigin } from '../../helpers/origin.js';

const PARKED = {
  ORIGIN_ROLE: 'http',
  TIMEOUT_SCAN_MS: '3600000',
  OUTBOX_POLL_MS: '3600000',
  RECONCILE_INTERVAL_MS: '3600000',
  FAILOVER_POLL_MS: '3600000',
};
const REDIS = 'redis.initial_minus_stock_equals_issued_minus_released_minus_refilled';
const CROSS = 'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked';

let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin(PARKED);
});
afterAll(async () => {
  await t?.stop();
});

/** A sale of `stock` units with `reserved` reservations (one unit each) in its Stream, none settled. */
async function reservedSale(opts: { stock: number; reserved: number; stockBuckets?: number }) {
  const { activityId, skuId } = await t.sale({ stock: opts.stock, stockBuckets: opts.stockBuckets });
  expect((await reserveAll(t, activityId, users(7000, opts.reserved))).every((r) => r.status === 202)).toBe(true);
  const sale = await t.origin.parts.catalog.resolve(activityId);
  const stream = (await t.origin.parts.redis.ledger.streamReservations(sale))!;
  const events: ReservationEvent[] = [...stream.values()].map((r) => r.event);
  expect(events).toHaveLength(opts.reserved);
  const target = { ...sale, paymentTimeoutSeconds: 900 };
  const give = (e: ReservationEvent) =>
    deadLetter(t.origin.parts.db, t.origin.parts.redis.sales, target, e, 5, 'test: gave up');
  const quiet = await reconcile(reconcileDeps(t), activityId);
  expect(failingChecks(quiet)).toEqual([]);
  expect(quiet.figures).toMatchObject({ available: opts.stock, redisStock: opts.stock - opts.reserved });
  return { activityId, skuId, sale, target, events, give };
}

describe('reconciliation while dead letters are compensated', () => {
  for (const stockBuckets of [1, 2]) {
    it(`a dead letter compensated and marked restocked between the Redis and the MySQL read is counted once (${stockBuckets} bucket(s))`, async () => {
      const { activityId, events, give } = await reservedSale({ stock: 20, reserved: 6, stockBuckets });
      const gone = events.slice(0, 3);
      let done = false;
      const rec = await reconcile(
        readingRedisThen(t, async () => {
          if (done) return;
          done = true;
          for (const e of gone) expect(await give(e)).toBe('dead_lettered');
        }),
        activityId,
      );
      // The interleaving happened: MySQL (read second) has every dead letter restocked in full.
      expect(await count(t, 'SELECT SUM(restocked) FROM seckill_dead_letter WHERE activity_id = ?', [activityId])).toBe(
        3,
      );
      expect(failingChecks(rec)).toEqual([]);
      expect(rec.figures).toMatchObject({
        available: 20,
        redisStock: 14,
        unsettled: 3,
        deadUnits: 3,
        deadNotRestocked: 3,
      });
      const quiet = await reconcile(reconcileDeps(t), activityId);
      expect(failingChecks(quiet)).toEqual([]);
      expect(quiet.figures).toMatchObject({ available: 20, redisStock: 17, unsettled: 3, deadNotRestocked: 0 });
    });
  }

  it('a dead letter compensated before the Redis read but marked restocked after the MySQL read is counted once', async () => {
    const { activityId, target, events } = await reservedSale({ stock: 20, reserved: 6 });
    const gone = events.slice(0, 2);
    // deadLetter() between its steps: the row recorded and Redis given the units back, `restocked` not written.
    for (const e of gone) {
      expect(await recordDeadLetter(t.origin.parts.db, target, e, 5, 'test: gave up')).toBe('recorded');
      expect(await compensate(t.origin.parts.db, t.origin.parts.redis.sales, target, e)).toBe(1);
    }
    const rec = await reconcile(reconcileDeps(t), activityId);
    expect(failingChecks(rec)).toEqual([]);
    expect(rec.figures).toMatchObject({
      available: 20,
      redisStock: 16,
      unsettled: 4,
      deadUnits: 2,
      deadNotRestocked: 0,
    });
    for (const e of gone)
      await t.db.pool.query('UPDATE seckill_dead_letter SET restocked = 1 WHERE reservation_id = ?', [e.reservationId]);
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([]);
  });

  it('a surplus compensation (no dead letter) between the reads is counted once', async () => {
    const { activityId, target, events } = await reservedSale({ stock: 20, reserved: 6 });
    let done = false;
    const rec = await reconcile(
      readingRedisThen(t, async () => {
        if (done) return;
        done = true;
        expect(await compensate(t.origin.parts.db, t.origin.parts.redis.sales, target, events[0]!)).toBe(1);
      }),
      activityId,
    );
    expect(failingChecks(rec)).toEqual([]);
    expect(rec.figures).toMatchObject({ redisStock: 14, unsettled: 6, surplus: 0 });
    const quiet = await reconcile(reconcileDeps(t), activityId);
    expect(failingChecks(quiet)).toEqual([]);
    expect(quiet.figures).toMatchObject({ redisStock: 15, unsettled: 5, surplus: 1 });
  });

  it('is exact on every read while dead letters stream in', async () => {
    const { activityId, events, give } = await reservedSale({ stock: 200, reserved: 120 });
    let giving = true;
    const compensations = (async () => {
      for (const e of events) await give(e);
      giving = false;
    })();
    const runs: string[][] = [];
    while (giving) runs.push(failingChecks(await reconcile(reconcileDeps(t), activityId)));
    await compensations;
    expect(runs.length).toBeGreaterThan(3);
    expect(runs.filter((r) => r.length > 0)).toEqual([]);
    const quiet = await reconcile(reconcileDeps(t), activityId);
    expect(failingChecks(quiet)).toEqual([]);
    expect(quiet.figures).toMatchObject({ available: 200, redisStock: 200, deadUnits: 120, deadNotRestocked: 0 });
  });

  it('still fails when Redis records units given back that its stock lacks, and units it holds but never gave back', async () => {
    const { activityId, skuId, events, give } = await reservedSale({ stock: 20, reserved: 4 });
    const keys = activityKeys(activityId, skuId);
    expect(await give(events[0]!)).toBe('dead_lettered');
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([]);

    // Under-selling: the release is recorded, its unit is not in stock (MySQL still says restocked = 1).
    await t.redis.decrby(keys.stock, 1);
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([`${REDIS} 4/3`, `${CROSS} 20/19`]);
    await t.redis.incrby(keys.stock, 1);
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([]);

    // Over-selling risk: the unit is in stock but Redis has no release of it (MySQL still says restocked = 1).
    await t.redis.hdel(keys.released, events[0]!.reservationId);
    expect(failingChecks(await reconcile(reconcileDeps(t), activityId))).toEqual([`${REDIS} 3/4`, `${CROSS} 20/21`]);
  });
});
