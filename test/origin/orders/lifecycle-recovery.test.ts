/**
 * The lifecycle's repair paths, driven step by step: the main origin serves HTTP only, settlement
 * runs in consumer origins started when a test wants it, and the timeout job and outbox worker are
 * run by hand on the origin's context (so a crash can be placed between their steps).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OriginParts } from '../../../origin/parts.js';
import { OutboxWorker } from '../../../origin/sale/outbox-worker.js';
import { TimeoutJob } from '../../../origin/orders/timeout-job.js';
import { activityKeys } from '../../../origin/redis/keys.js';
import { count, failingChecks, pay, reconciliation, reserveAll, users } from '../../helpers/lifecycle.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

const PARKED = {
  TIMEOUT_SCAN_MS: '3600000',
  OUTBOX_POLL_MS: '3600000',
  RECONCILE_INTERVAL_MS: '3600000',
  OUTBOX_CLAIM_LEASE_MS: '300',
};
let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin({ ...PARKED, ORIGIN_ROLE: 'http' });
});
afterAll(async () => {
  await t?.stop();
});

/** The timeout job and outbox worker as the server builds them, from the running origin's pieces. */
const timeoutJob = ({ db, log, metrics, config }: OriginParts = t.origin.parts) =>
  new TimeoutJob({ db, log, metrics, config });
const outboxWorker = ({ db, catalog, redis, publisher, log, metrics, config }: OriginParts = t.origin.parts) =>
  new OutboxWorker({ db, catalog, sales: redis.sales, publisher, log, metrics, config });

const consumers = (env: Record<string, string> = {}) =>
  startTestOrigin({ ...PARKED, ORIGIN_ROLE: 'consumers', ...env }, t.db);
const orders = (activityId: string) =>
  count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]);
const expire = (activityId: string, userIds: string[]) =>
  t.db.pool.query(
    `UPDATE seckill_order SET expire_at = NOW(3) - INTERVAL 1 SECOND WHERE activity_id = ? AND user_id IN (${userIds.join(',')})`,
    [activityId],
  );

describe('outbox worker killed between the DB commit and the Redis refill', () => {
  it('the next run refills exactly once (crash simulated in-process by running only the first steps)', async () => {
    const { activityId, skuId } = await t.sale({ stock: 4 });
    const keys = activityKeys(activityId, skuId);
    await reserveAll(t, activityId, users(100, 4));
    const c = await consumers();
    await waitFor(
      () => orders(activityId),
      (n) => n === 4,
    );
    await c.stop();
    expect(await t.redis.get(keys.stock)).toBe('0');
    await expire(activityId, ['100', '101']);

    // The timeout transaction commits (available += 2, REFILL logs, outbox rows); no refill yet.
    expect(await timeoutJob().round()).toBe(false);
    expect(await count(t, 'SELECT available FROM seckill_stock WHERE activity_id = ?', [activityId])).toBe(2);
    expect(await t.redis.get(keys.stock)).toBe('0');
    expect(failingChecks(await reconciliation(t, activityId))).toEqual([]); // unsynced refills are accounted for

    // Crash 1: a worker claims the rows and dies before touching Redis.
    const dying = outboxWorker();
    const claimed = await dying.claim();
    expect(claimed).toHaveLength(2);
    // Crash 2: another copy of a row is refilled in Redis, and the worker dies before marking it done.
    expect((await dying.refill(claimed[0]!)).kind).toBe('refilled');
    expect(await t.redis.get(keys.stock)).toBe('1');

    const next = outboxWorker();
    // Still under the dead worker's lease: nothing is claimed twice at once.
    expect((await next.runOnce()).claimed).toBe(0);
    await new Promise((r) => setTimeout(r, 400));
    expect(await next.runOnce()).toEqual({ claimed: 2, refilled: 1, already: 1, notWarmed: 0 });
    expect(await next.runOnce()).toEqual({ claimed: 0, refilled: 0, already: 0, notWarmed: 0 });
    expect(await t.redis.get(keys.stock)).toBe('2');
    expect(await t.redis.hlen(keys.refilled)).toBe(2);
    expect(
      await count(t, 'SELECT COUNT(*) FROM stock_sync_outbox WHERE activity_id = ? AND status = 1', [activityId]),
    ).toBe(2);
    // A second timeout round finds nothing: the orders are TIMEOUT already.
    expect(await timeoutJob().round()).toBe(false);
    expect(failingChecks(await reconciliation(t, activityId))).toEqual([]);
  });
});

describe('Redis loses a sale mid-way', () => {
  it('purchases get 503 without any write; warm-up refuses; recover rebuilds; the sale ends exact', async () => {
    const STOCK = 50;
    const { activityId, skuId } = await t.sale({ stock: STOCK });
    const keys = activityKeys(activityId, skuId);
    // The first wave: 10 reservations settled, then 20 more that stay in the Stream, never delivered
    // (the consumers are stopped before they are made, so how many settle does not depend on timing).
    const settledWave = await reserveAll(t, activityId, users(1000, 10));
    const c1 = await consumers({ SETTLE_WORKERS: '1', SETTLE_BATCH_SIZE: '5' });
    await waitFor(
      () => orders(activityId),
      (n) => n === 10,
      30_000,
    );
    await c1.stop();
    const firstWave = [...settledWave, ...(await reserveAll(t, activityId, users(1010, 20)))];
    expect(firstWave.map((r) => r.status)).toEqual(Array(30).fill(202));
    const settledBefore = await orders(activityId);
    expect(settledBefore).toBe(10);
    // One order times out before the loss, its refill not yet in Redis (an outbox row pending).
    await expire(activityId, [firstWave[0]!.userId]);
    expect(await timeoutJob().round()).toBe(false);

    // Redis loses the sale (the Stream survives, as with AOF): stock, holders, config, hashes gone.
    await t.redis.del(keys.stock, keys.holders, keys.config, keys.released, keys.refilled);
    const xlen = await t.redis.xlen(keys.events);
    const refused = await reserveAll(t, activityId, [...users(1000, 3), ...users(2000, 10)]);
    for (const r of refused) expect([r.status, r.body.error]).toEqual([503, 'not_ready']);
    expect(await t.redis.xlen(keys.events)).toBe(xlen);
    expect(await t.redis.exists(keys.stock, keys.holders)).toBe(0);
    expect(await orders(activityId)).toBe(settledBefore);
    // The refill waits rather than recreating a stock key.
    expect((await outboxWorker().runOnce()).notWarmed).toBe(1);
    expect(await t.redis.exists(keys.stock)).toBe(0);
    // Warm-up is not a back door.
    const warm = await t.admin('POST', `/admin/activities/${activityId}/warmup`);
    expect([warm.status, ((await warm.json()) as any).error]).toEqual([409, 'conflict']);

    const rec = await t.admin('POST', `/admin/activities/${activityId}/recover`);
    const body = (await rec.json()) as any;
    expect(rec.status).toBe(200);
    // stock = available − unsettled − unsynced refills = (50 − settled + 1) − (30 − settled) − 1
    expect(body).toMatchObject({
      activityId,
      stock: STOCK - 30,
      holders: 30,
      unsettled: 30 - settledBefore,
      pendingRefills: 1,
    });
    expect(failingChecks(await reconciliation(t, activityId))).toEqual([]);
    // Recover refuses a second time: the sale is warm again.
    expect((await t.admin('POST', `/admin/activities/${activityId}/recover`)).status).toBe(409);

    // Holders are back: the first wave's users get their same reservations.
    const replay = await reserveAll(t, activityId, users(1000, 30));
    for (const [i, r] of replay.entries()) {
      expect(r.status).toBe(200);
      expect(r.body.reservationId).toBe(firstWave[i]!.body.reservationId);
    }
    // The pending refill is applied now (once the waiting worker's lease ran out), exactly once.
    await new Promise((r) => setTimeout(r, 400));
    expect((await outboxWorker().runOnce()).refilled).toBe(1);
    const second = await reserveAll(t, activityId, users(3000, 40));
    expect(second.filter((r) => r.status === 202)).toHaveLength(STOCK - 30 + 1);
    expect(second.filter((r) => r.status === 409)).toHaveLength(40 - (STOCK - 30 + 1));

    const c2 = await consumers();
    try {
      await waitFor(
        () => orders(activityId),
        (n) => n === STOCK + 1,
        30_000,
      );
      await waitFor(
        async () => (await reconciliation(t, activityId)).ok,
        (ok) => ok === true,
        10_000,
      );
    } finally {
      await c2.stop();
    }
    expect(
      await count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ? AND status <> 2', [activityId]),
    ).toBe(STOCK);
    expect(
      await count(t, 'SELECT COUNT(DISTINCT user_id) FROM seckill_order WHERE activity_id = ?', [activityId]),
    ).toBe(STOCK + 1);
    expect(await count(t, 'SELECT available FROM seckill_stock WHERE activity_id = ?', [activityId])).toBe(0);
    expect(await t.redis.get(keys.stock)).toBe('0');
  });

  it('with the Stream gone too, recover refuses (409) and selling stays stopped', async () => {
    const { activityId, skuId } = await t.sale({ stock: 5 });
    const keys = activityKeys(activityId, skuId);
    await reserveAll(t, activityId, users(100, 2));
    const c = await consumers();
    await waitFor(
      () => orders(activityId),
      (n) => n === 2,
    );
    await c.stop();
    await t.redis.del(keys.stock, keys.holders, keys.config, keys.released, keys.refilled, keys.events);

    const rec = await t.admin('POST', `/admin/activities/${activityId}/recover`);
    const body = (await rec.json()) as any;
    expect([rec.status, body.error]).toEqual([409, 'conflict']);
    expect(body.message).toMatch(/Stream .* gone/);
    expect((await t.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(409);
    const [r] = await reserveAll(t, activityId, ['900']);
    expect([r!.status, r!.body.error]).toEqual([503, 'not_ready']);
    expect(await t.redis.exists(keys.stock, keys.events)).toBe(0);
  });
});

describe('reconciliation reports an injected mismatch', () => {
  it('a unit removed from MySQL, then one from Redis, each fails the right check', async () => {
    const { activityId, skuId } = await t.sale({ stock: 10 });
    const keys = activityKeys(activityId, skuId);
    await reserveAll(t, activityId, users(100, 3));
    const c = await consumers();
    await waitFor(
      () => orders(activityId),
      (n) => n === 3,
    );
    await c.stop();
    expect(failingChecks(await reconciliation(t, activityId))).toEqual([]);

    await t.db.pool.query('UPDATE seckill_stock SET available = available - 1 WHERE activity_id = ?', [activityId]);
    let rec = await reconciliation(t, activityId);
    expect(rec.ok).toBe(false);
    expect(failingChecks(rec)).toEqual([
      'db.initial_equals_available_plus_deducted_minus_refilled',
      'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked',
    ]);
    expect(rec.checks[0]).toMatchObject({ expected: 10, actual: 9 });
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toContain(`seckill_reconciliation_mismatches{activity="${activityId}"} 2`);

    await t.db.pool.query('UPDATE seckill_stock SET available = available + 1 WHERE activity_id = ?', [activityId]);
    await t.redis.decr(keys.stock);
    rec = await reconciliation(t, activityId);
    expect(failingChecks(rec)).toEqual([
      'redis.initial_minus_stock_equals_issued_minus_released_minus_refilled',
      'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked',
    ]);
  });
});

describe('switches', () => {
  it('paused stops reservations at once in Lua, survives a restart, and queued ones still settle', async () => {
    const { activityId, skuId } = await t.sale({ stock: 20 });
    const keys = activityKeys(activityId, skuId);
    expect((await reserveAll(t, activityId, users(100, 8))).every((r) => r.status === 202)).toBe(true);
    expect((await t.admin('PATCH', `/admin/activities/${activityId}`, { state: 'paused' })).status).toBe(200);
    expect(await t.redis.hget(keys.config, 'state')).toBe('paused');
    const [r] = await reserveAll(t, activityId, ['200']);
    expect([r!.status, r!.body.error]).toEqual([503, 'paused']);

    // A restarted origin (same MySQL and Redis) still refuses; its warm-up keeps the switch.
    const restarted = await startTestOrigin({ ...PARKED, ORIGIN_ROLE: 'http' }, t.db);
    try {
      const [again] = await reserveAll(restarted, activityId, ['201']);
      expect([again!.status, again!.body.error]).toEqual([503, 'paused']);
      const warm = (await (await restarted.admin('POST', `/admin/activities/${activityId}/warmup`)).json()) as any;
      expect(warm.state).toBe('paused');
    } finally {
      await restarted.stop();
    }
    // Settlement continues while paused: the 8 queued reservations become orders.
    const c = await consumers();
    try {
      await waitFor(
        () => orders(activityId),
        (n) => n === 8,
      );
    } finally {
      await c.stop();
    }
    expect(await t.redis.xlen(keys.events)).toBe(8);
    await t.admin('PATCH', `/admin/activities/${activityId}`, { state: 'open' });
    expect((await reserveAll(t, activityId, ['200']))[0]!.status).toBe(202);
  });
});

describe('dead letters, retry, give up, cleanup', () => {
  it('lists, retries one into an order, gives one up (idempotently), then cleans the ended sale up', async () => {
    const { activityId, skuId } = await t.sale({ stock: 3 });
    const keys = activityKeys(activityId, skuId);
    // Two units vanish from MySQL: two of three reservations become dead letters.
    await t.db.pool.query('UPDATE seckill_stock SET available = 1 WHERE activity_id = ?', [activityId]);
    const reserved = await reserveAll(t, activityId, users(100, 3), 1);
    const c = await consumers({ SETTLE_MAX_DELIVERIES: '1', SETTLE_CLAIM_IDLE_MS: '100' });
    try {
      await waitFor(
        () => count(t, 'SELECT COUNT(*) FROM seckill_dead_letter WHERE activity_id = ?', [activityId]),
        (n) => n === 2,
      );
      const list = (await (await t.admin('GET', `/admin/activities/${activityId}/dead-letters`)).json()) as any;
      expect(list.deadLetters).toHaveLength(2);
      expect(list.deadLetters.map((d: any) => d.status)).toEqual(['open', 'open']);
      const [retried, givenUp] = list.deadLetters as any[];

      // Retrying while MySQL still lacks the unit: refused by nothing, fails again, dead again.
      // Instead, the operator first restores the missing units, then retries.
      await t.db.pool.query('UPDATE seckill_stock SET available = available + 2 WHERE activity_id = ?', [activityId]);
      const retry = await t.admin('POST', `/admin/dead-letters/${retried.reservationId}/retry`);
      expect(await retry.json()).toEqual({ reservationId: retried.reservationId, status: 'retried', requeued: true });
      await waitFor(
        () => orders(activityId),
        (n) => n === 2,
      );
      const again = (await (await t.admin('POST', `/admin/dead-letters/${retried.reservationId}/retry`)).json()) as any;
      expect(again.error).toBe('conflict'); // settled now

      const g1 = (await (await t.admin('POST', `/admin/dead-letters/${givenUp.reservationId}/give-up`)).json()) as any;
      const g2 = (await (await t.admin('POST', `/admin/dead-letters/${givenUp.reservationId}/give-up`)).json()) as any;
      expect(g1).toEqual({ reservationId: givenUp.reservationId, status: 'given_up', restocked: 0 });
      expect(g2).toEqual(g1);
      expect((await t.admin('POST', `/admin/dead-letters/${givenUp.reservationId}/retry`)).status).toBe(409);
      const status = (await (
        await t.internal('GET', `/internal/reservations/${retried.reservationId}?userId=${retried.userId}`)
      ).json()) as any;
      expect(status.status).toBe('ordered');
      expect(failingChecks(await reconciliation(t, activityId))).toEqual([]);

      // Cleanup: refused before the end and while orders wait for payment.
      let res = await t.admin('POST', `/admin/activities/${activityId}/cleanup`);
      expect([res.status, ((await res.json()) as any).message]).toEqual([409, expect.stringMatching(/not ended/)]);
      await t.admin('PATCH', `/admin/activities/${activityId}`, { state: 'stopped' });
      res = await t.admin('POST', `/admin/activities/${activityId}/cleanup`);
      expect([res.status, ((await res.json()) as any).message]).toEqual([
        409,
        expect.stringMatching(/wait for payment/),
      ]);
      const [paidOrders] = (await t.db.pool.query('SELECT order_no FROM seckill_order WHERE activity_id = ?', [
        activityId,
      ])) as any;
      for (const o of paidOrders) expect((await pay(t, o.order_no)).status).toBe(200);
      res = await t.admin('POST', `/admin/activities/${activityId}/cleanup`);
      const cleaned = (await res.json()) as any;
      expect(res.status).toBe(200);
      expect(cleaned).toMatchObject({ activityId, state: 'stopped', expiresInSeconds: 86_400 });
      const ttl = await t.redis.ttl(keys.stock);
      expect(ttl).toBeGreaterThan(86_000);
      expect(await t.redis.ttl(keys.events)).toBeGreaterThan(86_000);
      expect(await t.redis.hexists('sk:activities', activityId)).toBe(0);
      expect(reserved).toHaveLength(3);
    } finally {
      await c.stop();
    }
  });
});

describe('bad input on the lifecycle admin endpoints', () => {
  it('answers 4xx with a contract code and writes nothing', async () => {
    const { activityId } = await t.sale({ stock: 2 });
    const cases: [string, string, number, string, string?][] = [
      ['GET', '/admin/activities/abc/dead-letters', 400, 'bad_request'],
      ['GET', '/admin/activities/0/dead-letters', 400, 'bad_request'],
      ['POST', '/admin/dead-letters/nope/retry', 400, 'bad_request'],
      ['POST', `/admin/dead-letters/${activityId}-${'a'.repeat(31)}/give-up`, 400, 'bad_request'],
      ['POST', `/admin/dead-letters/${activityId}-${'a'.repeat(32)}/retry`, 404, 'not_found'],
      ['POST', `/admin/dead-letters/${activityId}-${'a'.repeat(32)}/give-up`, 404, 'not_found'],
      ['POST', '/admin/activities/99999999999999999999/recover', 400, 'bad_request'],
      ['POST', '/admin/activities/123456789/recover', 404, 'not_found'],
      ['POST', `/admin/activities/${activityId}/recover`, 409, 'conflict'],
      ['POST', `/admin/activities/${activityId}/cleanup`, 409, 'conflict'],
      ['POST', '/admin/activities/123456789/cleanup', 404, 'not_found'],
      ['POST', `/admin/activities/${activityId}/recover`, 401, 'unauthenticated', 'wrong-token-0123'],
      ['GET', `/admin/activities/${activityId}/dead-letters`, 401, 'unauthenticated', 'wrong-token-0123'],
    ];
    for (const [method, path, status, code, token] of cases) {
      const res = await t.admin(method, path, undefined, token);
      expect({ path, status: res.status }).toEqual({ path, status });
      expect(((await res.json()) as any).error).toBe(code);
    }
    expect(await count(t, 'SELECT COUNT(*) FROM seckill_dead_letter')).toBe(
      await count(t, "SELECT COUNT(*) FROM seckill_dead_letter WHERE status IN ('open', 'given_up', 'retried')"),
    );
    expect(failingChecks(await reconciliation(t, activityId))).toEqual([]);
  });
});
