/**
 * Settlement: at-least-once delivery settled exactly once; a consumer killed with SIGKILL mid-way
 * and another started; MySQL holding less stock than Redis granted; a surplus reservation.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activityKeys, CONSUMER_GROUP } from '../../../origin/redis/keys.js';
import { reserveScript } from '../../../origin/redis/scripts/reserve.js';
import { ScriptRunner } from '../../../origin/redis/scripts/runner.js';
import { parseEvent } from '../../../origin/settlement/event.js';
import { settleBatch, settleReservation } from '../../../origin/settlement/settle.js';
import { REDIS_URL, scalar } from '../../helpers/db.js';
import { startTestOrigin, TEST_SECRETS, waitFor, type TestOrigin } from '../../helpers/origin.js';

let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin({ SETTLE_MAX_DELIVERIES: '2', SETTLE_CLAIM_IDLE_MS: '300' });
});
afterAll(async () => {
  await t.stop();
});

const count = (sql: string, params: unknown[]) => scalar(t.db.pool, sql, params);
const pendingOf = async (events: string) => Number(((await t.redis.xpending(events, CONSUMER_GROUP)) as unknown[])[0]);

async function reserveMany(activityId: string, users: string[]) {
  const results = [];
  for (const userId of users) {
    const res = await t.internal('POST', '/internal/reserve', {
      activityId,
      userId,
      quantity: 1,
      requestId: `r${userId}`,
    });
    results.push({ userId, status: res.status, body: (await res.json()) as any });
  }
  return results;
}

async function reconciliation(activityId: string) {
  return (await (await t.admin('GET', `/admin/activities/${activityId}/reconciliation`)).json()) as any;
}

describe('duplicate delivery', () => {
  it('settling the same Stream entry twice, even concurrently, writes one order', async () => {
    // No consumers here: the test settles the raw Stream entry by hand.
    const http = await startTestOrigin({ ORIGIN_ROLE: 'http' });
    try {
      const { activityId, skuId } = await http.sale({ stock: 5 });
      const res = await http.internal('POST', '/internal/reserve', {
        activityId,
        userId: '11',
        quantity: 1,
        requestId: 'r11',
      });
      expect(res.status).toBe(202);
      const [id, fields] = (
        (await http.redis.xrange(activityKeys(activityId, skuId).events, '-', '+')) as [string, string[]][]
      )[0]!;
      const event = parseEvent(id, fields)!;
      const target = { activityId, skuId, paymentTimeoutSeconds: 900 };
      const db = http.origin.parts.db;
      const outcomes = await Promise.all([settleReservation(db, target, event), settleReservation(db, target, event)]);
      expect(outcomes.sort()).toEqual(['duplicate', 'settled']);
      expect(await settleReservation(db, target, event)).toBe('duplicate');
      expect((await settleBatch(db, target, [event, event])).get(event.reservationId)).toBe('duplicate');
      const c = (sql: string) => scalar(http.db.pool, sql, [activityId]);
      expect(await c('SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?')).toBe(1);
      expect(await c('SELECT available FROM seckill_stock WHERE activity_id = ?')).toBe(4);
      expect(await c('SELECT COUNT(*) FROM seckill_stock_log WHERE activity_id = ?')).toBe(1);
    } finally {
      await http.stop();
    }
  });

  it("a first delivery that is not one (an order already there, another of the user's) settles as a checked batch", async () => {
    // firstDelivery skips the read of the users' orders; the unique keys must send such a batch
    // back to the checked path with nothing written.
    const http = await startTestOrigin({ ORIGIN_ROLE: 'http' });
    try {
      const { activityId, skuId } = await http.sale({ stock: 10 });
      const target = { activityId, skuId, paymentTimeoutSeconds: 900 };
      const db = http.origin.parts.db;
      const event = (n: number, userId: string) => ({
        streamId: `${n}-0`,
        reservationId: `${activityId}-${n.toString(16).padStart(32, '0')}`,
        requestId: `q${n}`,
        userId,
        quantity: 1,
        traceId: '',
        ts: Date.now(),
      });
      const settledBefore = event(1, '501');
      const otherOfUser = event(2, '502');
      expect((await settleBatch(db, target, [settledBefore, otherOfUser])).get(otherOfUser.reservationId)).toBe(
        'settled',
      );
      const surplus = event(3, '502'); // the same user's second reservation
      const fresh = [event(4, '503'), event(5, '504')];
      const outcomes = await settleBatch(db, target, [settledBefore, surplus, ...fresh], { firstDelivery: true });
      expect(Object.fromEntries(outcomes)).toEqual({
        [settledBefore.reservationId]: 'duplicate',
        [surplus.reservationId]: 'surplus',
        [fresh[0]!.reservationId]: 'settled',
        [fresh[1]!.reservationId]: 'settled',
      });
      const c = (sql: string) => scalar(http.db.pool, sql, [activityId]);
      expect(await c('SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?')).toBe(4);
      expect(await c('SELECT COUNT(DISTINCT user_id) FROM seckill_order WHERE activity_id = ?')).toBe(4);
      expect(await c('SELECT available FROM seckill_stock WHERE activity_id = ?')).toBe(6);
      expect(await c('SELECT COUNT(*) FROM seckill_stock_log WHERE activity_id = ?')).toBe(4);
      // A true first delivery is written as it is.
      const more = [event(6, '505'), event(7, '506')];
      const firstOutcomes = await settleBatch(db, target, more, { firstDelivery: true });
      expect([...firstOutcomes.values()]).toEqual(['settled', 'settled']);
      expect(await c('SELECT available FROM seckill_stock WHERE activity_id = ?')).toBe(4);
    } finally {
      await http.stop();
    }
  });

  it('redelivering a whole settled Stream to the group changes nothing', async () => {
    const { activityId, skuId } = await t.sale({ stock: 20 });
    const keys = activityKeys(activityId, skuId);
    await reserveMany(
      activityId,
      Array.from({ length: 20 }, (_, i) => String(100 + i)),
    );
    await waitFor(
      () => count('SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
      (n) => n === 20,
    );
    await waitFor(
      () => pendingOf(keys.events),
      (n) => n === 0,
    );
    // Rewind the group: every entry is delivered again.
    await t.redis.xgroup('SETID', keys.events, CONSUMER_GROUP, '0');
    await waitFor(
      async () => (await t.origin.parts.redis.streams.groupInfo({ activityId, skuId, buckets: 1 }))?.lag,
      (lag) => lag === 0,
    );
    await waitFor(
      () => pendingOf(keys.events),
      (n) => n === 0,
    );
    expect(await count('SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId])).toBe(20);
    expect(await count('SELECT available FROM seckill_stock WHERE activity_id = ?', [activityId])).toBe(0);
    expect((await reconciliation(activityId)).ok).toBe(true);
  });
});

/**
 * N reservations queued by the reserve script in a sale of their own (HTTP-only origin, own
 * database: no consumer of this suite sees it), and a way to start a consumer child process on it.
 */
async function queuedSale(N: number, userBase: number) {
  const writer = await startTestOrigin({ ORIGIN_ROLE: 'http' });
  const { activityId, skuId } = await writer.sale({ stock: N });
  const keys = activityKeys(activityId, skuId);
  const redis = new Redis(REDIS_URL);
  const scripts = new ScriptRunner(redis);
  await Promise.all(
    Array.from({ length: N }, (_, i) =>
      scripts.run(reserveScript, keys, {
        userId: String(userBase + i),
        quantity: 1,
        reservationId: `${activityId}-${String(i).padStart(32, '0')}`,
        requestId: `q${i}`,
        traceId: '',
        now: Date.now(),
        mayBorrow: false,
        checkEligibility: true,
      }),
    ),
  );
  expect(await redis.xlen(keys.events)).toBe(N);
  const count = (sql: string) => scalar(writer.db.pool, sql, [activityId]);
  return {
    writer,
    activityId,
    keys,
    count,
    orders: () => count('SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?'),
    reconciliation: async () =>
      (await (await writer.admin('GET', `/admin/activities/${activityId}/reconciliation`)).json()) as any,
    consumerProcess: (env: Record<string, string>) =>
      spawn(process.execPath, ['--import', 'tsx', 'origin/main.ts'], {
        env: {
          ...process.env,
          ...TEST_SECRETS,
          ORIGIN_ROLE: 'consumers',
          MYSQL_URL: writer.db.url,
          REDIS_URL,
          LOG_LEVEL: 'silent',
          SETTLE_WORKERS: '1',
          SETTLE_DISCOVERY_MS: '100',
          ...env,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      }),
    async close() {
      await writer.stop();
      await redis.quit();
    },
  };
}

describe('a consumer killed mid-settlement', () => {
  it('SIGKILL in the middle, another consumer started: every reservation settled exactly once', async () => {
    const N = 3000;
    const sale = await queuedSale(N, 1_000_000);
    const child = sale.consumerProcess({ SETTLE_BATCH_SIZE: '50' });
    // Kill it while it holds delivered, unacknowledged entries (a batch in its hands), after it has
    // settled a good part: in the middle of settling.
    const [settledAtKill] = await waitFor(
      async () => [await sale.orders(), await pendingOf(sale.keys.events)],
      ([orders, pending]) => orders! >= 200 && pending! > 0,
      30_000,
      2,
    );
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(settledAtKill).toBeLessThan(N);

    const second = await startTestOrigin({ ORIGIN_ROLE: 'consumers', SETTLE_CLAIM_IDLE_MS: '300' }, sale.writer.db);
    try {
      await waitFor(sale.orders, (n) => n >= N, 60_000);
      await waitFor(
        () => pendingOf(sale.keys.events),
        (n) => n === 0,
        30_000,
      );
      expect(await sale.orders()).toBe(N);
      expect(await sale.count('SELECT COUNT(DISTINCT reservation_id) FROM seckill_order WHERE activity_id = ?')).toBe(
        N,
      );
      expect(
        await sale.count("SELECT COUNT(*) FROM seckill_stock_log WHERE activity_id = ? AND change_type = 'DEDUCT'"),
      ).toBe(N);
      expect(await sale.count('SELECT available FROM seckill_stock WHERE activity_id = ?')).toBe(0);
      expect(await sale.count('SELECT COUNT(*) FROM seckill_dead_letter WHERE activity_id = ?')).toBe(0);
      expect((await sale.reconciliation()).checks.filter((c: any) => !c.ok)).toEqual([]);
    } finally {
      await second.stop();
      await sale.close();
    }
  });
});

describe('a consumer stopped with SIGTERM mid-settlement', () => {
  it('finishes or hands back its work, exits 0, and a restart settles the rest exactly once', async () => {
    const N = 2000;
    const sale = await queuedSale(N, 2_000_000);
    const child = sale.consumerProcess({ SETTLE_BATCH_SIZE: '20' });
    await waitFor(sale.orders, (n) => n >= 100, 30_000, 5);
    child.kill('SIGTERM');
    const [code, signal] = await once(child, 'exit');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const atStop = await sale.orders();
    expect(atStop).toBeLessThan(N);
    // Whatever it committed is whole: every order has its stock deduction and its log row.
    expect(
      await sale.count("SELECT COUNT(*) FROM seckill_stock_log WHERE activity_id = ? AND change_type = 'DEDUCT'"),
    ).toBe(atStop);
    expect(await sale.count('SELECT available FROM seckill_stock WHERE activity_id = ?')).toBe(N - atStop);

    const second = await startTestOrigin({ ORIGIN_ROLE: 'consumers', SETTLE_CLAIM_IDLE_MS: '300' }, sale.writer.db);
    try {
      await waitFor(sale.orders, (n) => n >= N, 60_000);
      await waitFor(
        () => pendingOf(sale.keys.events),
        (n) => n === 0,
        30_000,
      );
      expect(await sale.orders()).toBe(N);
      expect(await sale.count('SELECT available FROM seckill_stock WHERE activity_id = ?')).toBe(0);
      expect((await sale.reconciliation()).checks.filter((c: any) => !c.ok)).toEqual([]);
    } finally {
      await second.stop();
      await sale.close();
    }
  });
});

describe('MySQL has less stock than Redis granted', () => {
  it('never orders beyond MySQL stock; the rest retry, become dead letters, holders are released', async () => {
    const { activityId, skuId } = await t.sale({ stock: 10 });
    const keys = activityKeys(activityId, skuId);
    // Injected: 4 units vanish from MySQL behind the system's back.
    await t.db.pool.query('UPDATE seckill_stock SET available = 6 WHERE activity_id = ?', [activityId]);
    const users = Array.from({ length: 10 }, (_, i) => String(200 + i));
    const results = await reserveMany(activityId, users);
    expect(results.filter((r) => r.status === 202)).toHaveLength(10);

    await waitFor(
      () => count('SELECT COUNT(*) FROM seckill_dead_letter WHERE activity_id = ?', [activityId]),
      (n) => n === 4,
      30_000,
    );
    await waitFor(
      () => pendingOf(keys.events),
      (n) => n === 0,
    );
    expect(await count('SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId])).toBe(6);
    expect(await count('SELECT available FROM seckill_stock WHERE activity_id = ?', [activityId])).toBe(0);
    // Compensation gave no unit back to Redis: MySQL does not have them.
    expect(await t.redis.get(keys.stock)).toBe('0');
    expect(await count('SELECT SUM(restocked) FROM seckill_dead_letter WHERE activity_id = ?', [activityId])).toBe(0);

    const [dead] = (await t.db.pool.query(
      'SELECT user_id, reservation_id, deliveries, reason FROM seckill_dead_letter WHERE activity_id = ?',
      [activityId],
    )) as any;
    for (const d of dead) {
      expect(d.deliveries).toBeGreaterThan(2);
      expect(d.reason).toMatch(/less stock/);
      expect(await t.redis.hget(keys.holders, String(d.user_id))).toBeNull();
      const status = (await (
        await t.internal('GET', `/internal/reservations/${d.reservation_id}?userId=${d.user_id}`)
      ).json()) as any;
      expect(status.status).toBe('failed');
    }

    const rec = await reconciliation(activityId);
    expect(rec.ok).toBe(false);
    const failing = rec.checks.filter((c: any) => !c.ok).map((c: any) => c.name);
    expect(failing).toContain('db.initial_equals_available_plus_deducted_minus_refilled');
    expect(
      rec.checks.find((c: any) => c.name === 'db.initial_equals_available_plus_deducted_minus_refilled'),
    ).toMatchObject({ expected: 10, actual: 6 });
  });
});

describe('one client, one Idempotency-Key, two sales', () => {
  it('reusing a request id in another sale is a new purchase there, settled as its own order', async () => {
    const a = await t.sale({ stock: 2 });
    const b = await t.sale({ stock: 2 });
    for (const { activityId } of [a, b]) {
      const res = await t.internal('POST', '/internal/reserve', {
        activityId,
        userId: '400',
        quantity: 1,
        requestId: 'same-key',
      });
      expect(res.status).toBe(202);
    }
    for (const { activityId } of [a, b]) {
      await waitFor(
        () => count('SELECT COUNT(*) FROM seckill_order WHERE activity_id = ? AND user_id = 400', [activityId]),
        (n) => n === 1,
      );
      expect(await count('SELECT available FROM seckill_stock WHERE activity_id = ?', [activityId])).toBe(1);
    }
    const [rows] = (await t.db.pool.query(
      'SELECT request_id FROM seckill_order WHERE user_id = 400 ORDER BY activity_id',
    )) as any;
    expect(rows.map((r: any) => r.request_id).sort()).toEqual(
      [`${a.activityId}:400:same-key`, `${b.activityId}:400:same-key`].sort(),
    );
  });
});

describe('surplus reservation', () => {
  it("a user's second reservation is released with its unit when the user already has an order", async () => {
    const { activityId, skuId } = await t.sale({ stock: 3 });
    const keys = activityKeys(activityId, skuId);
    // The user already has an order from an earlier reservation (as after a recovery) ...
    await t.db.pool.query(
      `INSERT INTO seckill_order (order_no, reservation_id, request_id, activity_id, sku_id, user_id, quantity, status, expire_at)
       VALUES ('SURPLUSTEST${activityId.slice(-8)}', '${activityId}-${'f'.repeat(32)}', 'x:old', ?, ?, 300, 1, 0,
               DATE_ADD(NOW(3), INTERVAL 1 HOUR))`, // not yet due: the timeout job must not refill it mid-test
      [activityId, skuId],
    );
    await t.db.pool.query('UPDATE seckill_stock SET available = available - 1 WHERE activity_id = ?', [activityId]);
    await t.db.pool.query(
      "INSERT INTO seckill_stock_log (activity_id, sku_id, biz_id, change_type, quantity) VALUES (?, ?, ?, 'DEDUCT', 1)",
      [activityId, skuId, `${activityId}-${'f'.repeat(32)}`],
    );
    await t.redis.decr(keys.stock);
    // ... and Redis, not knowing, grants another one.
    const [r] = await reserveMany(activityId, ['300']);
    expect(r!.status).toBe(202);
    await waitFor(
      () => t.redis.hget(keys.released, r!.body.reservationId),
      (v) => v !== null,
    );
    await waitFor(
      () => pendingOf(keys.events),
      (n) => n === 0,
    );
    expect(
      await count('SELECT COUNT(*) FROM seckill_order WHERE activity_id = ? AND user_id = 300', [activityId]),
    ).toBe(1);
    expect(await t.redis.get(keys.stock)).toBe('2'); // the surplus unit went back: MySQL still has it
    expect(await count('SELECT available FROM seckill_stock WHERE activity_id = ?', [activityId])).toBe(2);
  });
});
