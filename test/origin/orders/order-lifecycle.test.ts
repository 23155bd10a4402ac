/**
 * Order lifecycle with real jobs running (two origins: both run the timeout job and the outbox
 * worker): payment callbacks racing timeouts, refilled units sold again, the payment webhook's
 * contract and its bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activityKeys } from '../../../origin/redis/keys.js';
import {
  count,
  failingChecks,
  pay,
  paymentHeaders,
  reconciliation,
  reserveAll,
  users,
} from '../../helpers/lifecycle.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

const FAST_JOBS = { TIMEOUT_SCAN_MS: '30', OUTBOX_POLL_MS: '30', SETTLE_WORKERS: '2' };
let t: TestOrigin;
let second: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin(FAST_JOBS);
  second = await startTestOrigin({ ...FAST_JOBS, ORIGIN_ROLE: 'consumers' }, t.db);
});
afterAll(async () => {
  await second?.stop();
  await t?.stop();
});

const settledAll = (activityId: string, n: number) =>
  waitFor(
    () => count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
    (c) => c === n,
    60_000,
  );

describe('payment callback and timeout racing on the same 500 orders', () => {
  it('every order ends PAID or TIMEOUT, never both; refills == timeouts; reconciliation ok', async () => {
    const N = 500;
    const { activityId, skuId } = await t.sale({ stock: N });
    const keys = activityKeys(activityId, skuId);
    expect((await reserveAll(t, activityId, users(10_000, N))).every((r) => r.status === 202)).toBe(true);
    await settledAll(activityId, N);
    const [orders] = (await t.db.pool.query('SELECT order_no FROM seckill_order WHERE activity_id = ?', [
      activityId,
    ])) as any;
    // Time is the one thing a test cannot wait 15 minutes for. A third of the orders are past their
    // deadline and timed out before their payment comes; a third have an hour left when it comes;
    // the rest race: their deadlines fall over the next 1.5 s while the payments arrive over 0.7 s.
    // So both outcomes happen however fast the machine is, and the race itself is wherever it falls.
    const third = Math.floor(orders.length / 3);
    const lateOnes = orders.slice(0, third).map((o: any) => o.order_no as string);
    const earlyOnes = orders.slice(third, 2 * third).map((o: any) => o.order_no as string);
    const racing = orders.slice(2 * third).map((o: any) => o.order_no as string);
    const setDeadline = (orderNos: string[], expr: string) =>
      t.db.pool.query(`UPDATE seckill_order SET expire_at = ${expr} WHERE order_no IN (?)`, [orderNos]);
    await setDeadline(lateOnes, 'NOW(3) - INTERVAL 1 SECOND');
    await setDeadline(earlyOnes, 'NOW(3) + INTERVAL 1 HOUR');
    await waitFor(
      () => count(t, 'SELECT COUNT(*) FROM seckill_order WHERE order_no IN (?) AND status = 2', [lateOnes]),
      (n) => n === lateOnes.length,
    );
    await setDeadline(racing, 'NOW(3) + INTERVAL FLOOR(RAND() * 1500000) MICROSECOND');
    const answers = await Promise.all(
      [...lateOnes, ...earlyOnes, ...racing].map(async (orderNo) => {
        await new Promise((r) => setTimeout(r, Math.random() * 700));
        return { orderNo, ...(await pay(t, orderNo)) };
      }),
    );
    await waitFor(
      () => count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ? AND status = 0', [activityId]),
      (n) => n === 0,
    );
    await waitFor(
      () => count(t, 'SELECT COUNT(*) FROM stock_sync_outbox WHERE activity_id = ? AND status = 0', [activityId]),
      (n) => n === 0,
    );

    const paid = answers.filter((a) => a.status === 200);
    const late = answers.filter((a) => a.status === 409);
    expect(paid.length + late.length).toBe(N);
    for (const a of paid) expect(a.body).toEqual({ orderNo: a.orderNo, status: 'paid' });
    for (const a of late) expect(a.body.error).toBe('order_timed_out');
    const [rows] = (await t.db.pool.query('SELECT order_no, status FROM seckill_order WHERE activity_id = ?', [
      activityId,
    ])) as any;
    const statusOf = new Map<string, number>(rows.map((r: any) => [r.order_no, Number(r.status)]));
    for (const a of paid) expect(statusOf.get(a.orderNo)).toBe(1);
    for (const a of late) expect(statusOf.get(a.orderNo)).toBe(2);
    const timeouts = late.length;
    console.log(`race: ${paid.length} paid, ${timeouts} timed out`);
    expect(timeouts).toBeGreaterThanOrEqual(lateOnes.length);
    expect(paid.length).toBeGreaterThanOrEqual(earlyOnes.length);

    expect(
      await count(t, "SELECT COUNT(*) FROM seckill_stock_log WHERE activity_id = ? AND change_type = 'REFILL'", [
        activityId,
      ]),
    ).toBe(timeouts);
    expect(
      await count(t, 'SELECT COUNT(*) FROM stock_sync_outbox WHERE activity_id = ? AND status = 1', [activityId]),
    ).toBe(timeouts);
    expect(await count(t, 'SELECT COUNT(*) FROM seckill_refund WHERE activity_id = ?', [activityId])).toBe(timeouts);
    expect(await count(t, 'SELECT available FROM seckill_stock WHERE activity_id = ?', [activityId])).toBe(timeouts);
    expect(await t.redis.hlen(keys.refilled)).toBe(timeouts);
    expect(Number(await t.redis.get(keys.stock))).toBe(timeouts);

    // Repeats: a paid order answers the same 200; a late payment the same 409, no second refund row.
    expect(await pay(t, paid[0]!.orderNo)).toEqual({
      status: 200,
      body: { orderNo: paid[0]!.orderNo, status: 'paid' },
    });
    expect((await pay(t, late[0]!.orderNo)).body.error).toBe('order_timed_out');
    expect(await count(t, 'SELECT COUNT(*) FROM seckill_refund WHERE activity_id = ?', [activityId])).toBe(timeouts);
    // A different payment for a paid order is refused and recorded for refund.
    expect((await pay(t, paid[0]!.orderNo, 'other-payment')).status).toBe(409);

    const rec = await reconciliation(t, activityId);
    expect(failingChecks(rec)).toEqual([]);
  });
});

describe('a timed-out unit is sold again', () => {
  it('goes to another user; the timed-out user keeps their reservation; live orders never exceed stock', async () => {
    const STOCK = 5;
    const { activityId, skuId } = await t.sale({ stock: STOCK });
    const keys = activityKeys(activityId, skuId);
    let maxLive = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const live = await count(
          t,
          'SELECT COALESCE(SUM(quantity), 0) FROM seckill_order WHERE activity_id = ? AND status <> 2',
          [activityId],
        );
        maxLive = Math.max(maxLive, live);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();

    const first = await reserveAll(t, activityId, users(500, STOCK));
    expect(first.every((r) => r.status === 202)).toBe(true);
    await settledAll(activityId, STOCK);
    const [late] = await reserveAll(t, activityId, ['600']);
    expect(late!.status).toBe(409);
    expect(late!.body.error).toBe('sold_out');

    // Users 500 and 501 do not pay in time.
    await t.db.pool.query(
      'UPDATE seckill_order SET expire_at = NOW(3) - INTERVAL 1 SECOND WHERE activity_id = ? AND user_id IN (500, 501)',
      [activityId],
    );
    await waitFor(
      () => t.redis.get(keys.stock),
      (s) => s === '2',
    );
    // The sold-out flag was cleared by the refill: new users get the two units, a third does not.
    const again = await reserveAll(t, activityId, ['600', '601', '602'], 1);
    expect(again.map((r) => r.status)).toEqual([202, 202, 409]);
    // The timed-out user still holds their (timed-out) reservation: one per user per sale.
    const [holder] = await reserveAll(t, activityId, ['500']);
    expect(holder!.status).toBe(200);
    expect(holder!.body.reservationId).toBe(first[0]!.body.reservationId);
    const status = (await (
      await t.internal('GET', `/internal/reservations/${holder!.body.reservationId}?userId=500`)
    ).json()) as any;
    expect(status.status).toBe('timeout');

    await settledAll(activityId, STOCK + 2);
    watching = false;
    await watcher;
    expect(maxLive).toBeLessThanOrEqual(STOCK);
    expect(
      await count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ? AND status <> 2', [activityId]),
    ).toBe(STOCK);
    expect(failingChecks(await reconciliation(t, activityId))).toEqual([]);
  });
});

describe('payment webhook contract', () => {
  it('unknown order → 404 not_found; bad signatures → 401; malformed → 400; nothing written', async () => {
    const { activityId } = await t.sale({ stock: 2 });
    await reserveAll(t, activityId, ['700']);
    await settledAll(activityId, 1);
    const [[order]] = (await t.db.pool.query('SELECT order_no FROM seckill_order WHERE activity_id = ?', [
      activityId,
    ])) as any;
    const orderNo = order.order_no as string;

    expect((await pay(t, 'NOSUCHORDER0')).body.error).toBe('not_found');
    const post = (body: string, headers: Record<string, string>) =>
      fetch(`${t.url}/payments/callback`, { method: 'POST', headers, body });
    const good = JSON.stringify({ orderNo, paymentId: 'p1', status: 'paid' });
    const cases: [string, Record<string, string>, number, string][] = [
      [good, { 'content-type': 'application/json' }, 401, 'unauthenticated'],
      [good, paymentHeaders(good, String(Date.now()), 'wrong-secret-0123456789'), 401, 'unauthenticated'],
      [good, paymentHeaders(good, String(Date.now() - 6 * 60_000)), 401, 'unauthenticated'],
      [good, { ...paymentHeaders(good), 'x-payment-signature': 'v1=zz' }, 401, 'unauthenticated'],
      [good.replace('p1', 'p2'), paymentHeaders(good), 401, 'unauthenticated'], // body altered after signing
      ['{not json', paymentHeaders('{not json'), 400, 'bad_request'],
      ...[
        { orderNo, paymentId: 'p1', status: 'refunded' },
        { orderNo, paymentId: 'p1' },
        { orderNo, paymentId: 'p1', status: 'paid', extra: 1 },
        { orderNo: 'x'.repeat(33), paymentId: 'p1', status: 'paid' },
        { orderNo, paymentId: 'bad id with spaces', status: 'paid' },
        { orderNo: 42, paymentId: 'p1', status: 'paid' },
        [],
        null,
      ].map((b): [string, Record<string, string>, number, string] => {
        const s = JSON.stringify(b);
        return [s, paymentHeaders(s), 400, 'bad_request'];
      }),
    ];
    for (const [body, headers, status, code] of cases) {
      const res = await post(body, headers);
      expect({ body, status: res.status }).toEqual({ body, status });
      expect(((await res.json()) as any).error).toBe(code);
    }
    expect(
      await count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ? AND status = 0', [activityId]),
    ).toBe(1);
    expect(await count(t, 'SELECT COUNT(*) FROM seckill_refund WHERE activity_id = ?', [activityId])).toBe(0);
    expect(await pay(t, orderNo, 'p1')).toEqual({ status: 200, body: { orderNo, status: 'paid' } });
  });
});
