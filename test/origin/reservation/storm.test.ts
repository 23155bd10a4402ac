/**
 * The storm: stock 100, 1,000 users each sending 3 concurrent reserve calls through the origin's
 * HTTP API. Exactly 100 users win; a winner's repeats all return its reservation; after settlement
 * the books are exact and reconcile.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { scalar } from '../../helpers/db.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

let t: TestOrigin;
beforeAll(async () => {
  // Client and origin share this process's event loop here: give Redis calls room under the burst.
  t = await startTestOrigin({ SETTLE_WORKERS: '2', REDIS_COMMAND_TIMEOUT_MS: '2000' });
});
afterAll(async () => {
  await t.stop();
});

it('sells exactly the stock to exactly that many users, and settlement books each once', async () => {
  const { activityId, skuId } = await t.sale({ stock: 100 });
  const users = Array.from({ length: 1000 }, (_, i) => String(5_000_000 + i));
  const oneUser = (userId: string, i: number) =>
    Promise.all(
      [0, 1, 2].map((k) => {
        // Every third user repeats one requestId (a client retry); the others use a fresh one per call.
        const requestId = i % 3 === 0 ? `req-${userId}` : `req-${userId}-${k}`;
        return t
          .internal('POST', '/internal/reserve', { activityId, userId, quantity: 1, requestId })
          .then(async (res) => ({ userId, status: res.status, body: (await res.json()) as any }));
      }),
    );
  // 100 users at a time, each with its 3 calls in flight together: 300 concurrent requests.
  const results: { userId: string; status: number; body: any }[] = [];
  const queue = users.map((u, i) => [u, i] as const);
  await Promise.all(
    Array.from({ length: 100 }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) results.push(...(await oneUser(...next)));
    }),
  );

  const byStatus: Record<string, number> = {};
  for (const r of results) {
    const key = `${r.status} ${r.body.error ?? ''}`;
    byStatus[key] = (byStatus[key] ?? 0) + 1;
  }
  expect(
    results.filter((r) => r.status >= 500),
    JSON.stringify(byStatus),
  ).toEqual([]);
  const accepted = results.filter((r) => r.status === 202 || r.status === 200);
  const rejected = results.filter((r) => r.status === 409);
  expect(accepted.length + rejected.length, JSON.stringify(byStatus)).toBe(3000);
  expect(rejected.every((r) => r.body.error === 'sold_out')).toBe(true);

  const created = results.filter((r) => r.status === 202);
  expect(created).toHaveLength(100);
  const winners = new Map(created.map((r) => [r.userId, r.body.reservationId as string]));
  expect(winners.size).toBe(100);
  // Every accepted call (new or repeat) belongs to a winner and carries that winner's reservation id.
  for (const r of accepted) expect(r.body.reservationId).toBe(winners.get(r.userId));
  // A losing user got nothing at all.
  for (const r of results) if (!winners.has(r.userId)) expect(r.status).toBe(409);

  const db = t.db.pool;
  await waitFor(
    () => scalar(db, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
    (n) => n >= 100,
  );
  await waitFor(
    async () => Number((await t.redis.xpending(`sk:{${activityId}:${skuId}}:events`, 'settle'))[0]),
    (n) => n === 0,
  );

  expect(await scalar(db, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId])).toBe(100);
  expect(
    await scalar(db, 'SELECT COUNT(DISTINCT user_id) FROM seckill_order WHERE activity_id = ?', [activityId]),
  ).toBe(100);
  const [orders] = (await db.query('SELECT user_id, reservation_id FROM seckill_order WHERE activity_id = ?', [
    activityId,
  ])) as any;
  for (const o of orders) expect(winners.get(String(o.user_id))).toBe(o.reservation_id);
  expect(await scalar(db, 'SELECT available FROM seckill_stock WHERE activity_id = ?', [activityId])).toBe(0);
  expect(await t.redis.get(`sk:{${activityId}:${skuId}}:stock`)).toBe('0');
  expect(
    await scalar(db, "SELECT COUNT(*) FROM seckill_stock_log WHERE activity_id = ? AND change_type = 'DEDUCT'", [
      activityId,
    ]),
  ).toBe(100);

  const rec = (await (await t.admin('GET', `/admin/activities/${activityId}/reconciliation`)).json()) as any;
  expect(rec.checks.filter((c: any) => !c.ok)).toEqual([]);
  expect(rec.ok).toBe(true);

  // After settlement a winner's status is `ordered` with an order number; a repeat still returns it.
  const [winner, reservationId] = [...winners.entries()][0]!;
  const status = (await (
    await t.internal('GET', `/internal/reservations/${reservationId}?userId=${winner}`)
  ).json()) as any;
  expect(status).toMatchObject({ reservationId, status: 'ordered' });
  expect(status.orderNo).toMatch(/^[0-9A-F]{24}$/);
  const again = await t.internal('POST', '/internal/reserve', {
    activityId,
    userId: winner,
    quantity: 1,
    requestId: 'late-retry',
  });
  expect(again.status).toBe(200);
  expect(((await again.json()) as any).reservationId).toBe(reservationId);
});
