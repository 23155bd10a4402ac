/**
 * What a settlement batch writes (origin/settlement/settle.ts), field by field, for interleaved
 * sales and batch sizes (prepared statements are reused per size); and every pool session runs in
 * UTC (origin/platform/db/pool.ts), so an order's expire_at — "now + the payment window" — is on the clock
 * the timeout job (`expire_at < NOW(3)`) and the API read it with, whatever the server's zone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newReservationId } from '../../../contract/ids.js';
import { createPool, type Db } from '../../../origin/platform/db/pool.js';
import { orderNoFor, settleBatch } from '../../../origin/settlement/settle.js';
import type { ReservationEvent } from '../../../origin/settlement/event.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

let t: TestDatabase;
let db: Db;
beforeAll(async () => {
  t = await createTestDatabase();
  db = createPool(t.url, 3);
});
afterAll(async () => {
  await db?.end();
  await t?.drop();
});

const event = (activityId: string, i: number): ReservationEvent => ({
  streamId: `1-${i}`,
  reservationId: newReservationId(activityId),
  requestId: `r${i}`,
  userId: String(5_000 + i),
  quantity: 1 + (i % 2),
  traceId: i % 3 === 0 ? '' : `${i}`.padStart(32, 'a'),
  ts: Date.now(),
});

async function saleWithStock(activityId: string, skuId: string, units: number) {
  await db.query('INSERT INTO seckill_stock (activity_id, sku_id, initial_stock, available) VALUES (?, ?, ?, ?)', [
    activityId,
    skuId,
    units,
    units,
  ]);
}

describe('settlement batch rows and the session clock', () => {
  it('every pool session is in UTC, through query and through a held connection', async () => {
    const [viaPool] = (await db.query('SELECT @@session.time_zone AS tz')) as unknown as [{ tz: string }[]];
    expect(viaPool[0]!.tz).toBe('+00:00');
    const held = await Promise.all([db.getConnection(), db.getConnection(), db.getConnection()]);
    for (const c of held) {
      const [rows] = (await c.query('SELECT @@session.time_zone AS tz')) as unknown as [{ tz: string }[]];
      expect(rows[0]!.tz).toBe('+00:00');
    }
    for (const c of held) c.release();
  });

  it('writes every order field, its stock-log row and the deduction; expire_at = now + the window', async () => {
    const activityId = '8800000001';
    const skuId = '77';
    await saleWithStock(activityId, skuId, 100);
    const events = Array.from({ length: 7 }, (_, i) => event(activityId, i));
    const before = Date.now();
    const outcomes = await settleBatch(db, { activityId, skuId, paymentTimeoutSeconds: 600 }, events, {
      firstDelivery: true,
    });
    const after = Date.now();
    expect([...outcomes.values()]).toEqual(Array(7).fill('settled'));

    const [orders] = (await db.query(
      'SELECT order_no, reservation_id, request_id, activity_id, sku_id, user_id, quantity, status, expire_at, trace_id FROM seckill_order WHERE activity_id = ? ORDER BY user_id',
      [activityId],
    )) as unknown as [Record<string, unknown>[]];
    expect(orders).toHaveLength(7);
    for (const [i, o] of orders.entries()) {
      const e = events[i]!;
      expect(o).toMatchObject({
        order_no: orderNoFor(e.reservationId),
        reservation_id: e.reservationId,
        request_id: `${activityId}:${e.userId}:${e.requestId}`,
        activity_id: activityId,
        sku_id: skuId,
        user_id: e.userId,
        quantity: e.quantity,
        status: 0,
        trace_id: e.traceId || null,
      });
      const expireAt = (o.expire_at as Date).getTime();
      // MySQL's clock, read back through the driver: the same instant as this process's, within a second.
      expect(expireAt).toBeGreaterThanOrEqual(before + 600_000 - 1_000);
      expect(expireAt).toBeLessThanOrEqual(after + 600_000 + 1_000);
    }
    const [log] = (await db.query(
      "SELECT activity_id, sku_id, biz_id, quantity FROM seckill_stock_log WHERE activity_id = ? AND change_type = 'DEDUCT' ORDER BY id",
      [activityId],
    )) as unknown as [Record<string, unknown>[]];
    expect(log.map((r) => [r.activity_id, r.sku_id, r.biz_id, r.quantity])).toEqual(
      events.map((e) => [activityId, skuId, e.reservationId, e.quantity]),
    );
    const units = events.reduce((sum, e) => sum + e.quantity, 0);
    const [stock] = (await db.query('SELECT available FROM seckill_stock WHERE activity_id = ?', [
      activityId,
    ])) as unknown as [{ available: number }[]];
    expect(stock[0]!.available).toBe(100 - units);
  });

  it('two sales and two batch sizes interleaved each get their own ids in their rows', async () => {
    const sales = [
      { activityId: '8800000002', skuId: '1', paymentTimeoutSeconds: 60 },
      { activityId: '8800000003', skuId: '2', paymentTimeoutSeconds: 3600 },
    ];
    for (const s of sales) await saleWithStock(s.activityId, s.skuId, 50);
    for (const size of [3, 5, 3]) {
      for (const s of sales) {
        const events = Array.from({ length: size }, (_, i) => ({
          ...event(s.activityId, i),
          userId: String(Math.floor(Math.random() * 2 ** 40) + 1),
        }));
        const outcomes = await settleBatch(db, s, events, { firstDelivery: true });
        expect([...outcomes.values()].every((o) => o === 'settled')).toBe(true);
      }
    }
    for (const s of sales) {
      const [rows] = (await db.query(
        'SELECT COUNT(*) AS n, MIN(sku_id) AS sku, MAX(sku_id) AS skuMax, MIN(TIMESTAMPDIFF(SECOND, created_at, expire_at)) AS w, MAX(TIMESTAMPDIFF(SECOND, created_at, expire_at)) AS wMax FROM seckill_order WHERE activity_id = ?',
        [s.activityId],
      )) as unknown as [{ n: number; sku: string; skuMax: string; w: number; wMax: number }[]];
      expect({ ...rows[0], n: Number(rows[0]!.n) }).toMatchObject({ n: 11, sku: s.skuId, skuMax: s.skuId });
      expect(Number(rows[0]!.w)).toBeGreaterThanOrEqual(s.paymentTimeoutSeconds - 1);
      expect(Number(rows[0]!.wMax)).toBeLessThanOrEqual(s.paymentTimeoutSeconds + 1);
      // The sale's ids are written into the statements: each sale's stock-log rows carry its own.
      const [log] = (await db.query(
        'SELECT COUNT(*) AS n, MIN(sku_id) AS sku, MAX(sku_id) AS skuMax FROM seckill_stock_log WHERE activity_id = ?',
        [s.activityId],
      )) as unknown as [{ n: number; sku: string; skuMax: string }[]];
      expect({ ...log[0], n: Number(log[0]!.n) }).toEqual({ n: 11, sku: s.skuId, skuMax: s.skuId });
    }
  });

  it('a sale whose ids are not decimal ids is refused before anything is written', async () => {
    const activityId = '8800000004';
    await saleWithStock(activityId, '1', 10);
    for (const target of [
      { activityId: `${activityId}, 1) --`, skuId: '1' },
      { activityId, skuId: '1 OR 1' },
    ]) {
      await expect(
        settleBatch(db, { ...target, paymentTimeoutSeconds: 60 }, [event(activityId, 0)], { firstDelivery: true }),
      ).rejects.toThrow(/not a sale/);
    }
    const [orders] = (await db.query('SELECT COUNT(*) AS n FROM seckill_order WHERE activity_id = ?', [
      activityId,
    ])) as unknown as [{ n: number }[]];
    expect(Number(orders[0]!.n)).toBe(0);
  });
});
