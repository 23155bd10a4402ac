/**
 * The settle benchmark's floor (bench/lib/settle-floor.ts) writes exactly the rows a settlement
 * batch writes for the same reservations (origin/settlement/settle.ts): the same orders, stock-log
 * rows, order-event outbox rows (events on) and stock deduction, field by field — so the floor the
 * benchmark measures settlement against is the same work, not a cheaper one. Nothing here is timed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newReservationId } from '../../../contract/ids.js';
import { createPool, type Db } from '../../../origin/platform/db/pool.js';
import type { ReservationEvent } from '../../../origin/settlement/event.js';
import { settleBatch, type SettleTarget } from '../../../origin/settlement/settle.js';
import { runSettleFloor } from '../../../bench/lib/settle-floor.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

let t: TestDatabase;
let db: Db;
beforeAll(async () => {
  t = await createTestDatabase();
  db = createPool(t.url, 2);
});
afterAll(async () => {
  await db?.end();
  await t?.drop();
});

const reservations = (activityId: string, n: number): ReservationEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    streamId: `1-${i}`,
    reservationId: newReservationId(activityId),
    requestId: `r${i}`,
    userId: String(7_000 + i * 13),
    quantity: 1 + (i % 2),
    traceId: i % 3 === 0 ? '' : `${i}`.padStart(32, 'b'),
    ts: Date.now(),
  }));

async function query(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const [found] = (await db.query(sql, params)) as unknown as [Record<string, unknown>[]];
  return found;
}

/** What the sale's rows hold, without auto-increment ids, server times and random batch ids. */
async function rowsOf(activityId: string) {
  return {
    orders: await query(
      `SELECT order_no, reservation_id, request_id, activity_id, sku_id, user_id, quantity, status, trace_id,
              payment_id, paid_at, TIMESTAMPDIFF(MICROSECOND, created_at, expire_at) AS window_us
         FROM seckill_order WHERE activity_id = ? ORDER BY reservation_id`,
      [activityId],
    ),
    stockLog: await query(
      'SELECT activity_id, sku_id, biz_id, change_type, quantity FROM seckill_stock_log WHERE activity_id = ? ORDER BY biz_id',
      [activityId],
    ),
    outbox: await query(
      `SELECT LEFT(event_id, 6) AS id_kind, type, order_no, activity_id, user_id, quantity, events, payload, status, attempts
         FROM order_event_outbox WHERE activity_id = ? ORDER BY seq`,
      [activityId],
    ),
    stock: (await query('SELECT initial_stock, available FROM seckill_stock WHERE activity_id = ?', [activityId])).map(
      (r) => ({ initial: Number(r.initial_stock), available: Number(r.available) }),
    ),
  };
}

/** Removes what a run wrote for the sale and gives its stock row its units back. */
async function reset(activityId: string) {
  for (const table of ['seckill_order', 'seckill_stock_log', 'order_event_outbox'])
    await db.query(`DELETE FROM ${table} WHERE activity_id = ?`, [activityId]);
  await db.query('UPDATE seckill_stock SET available = initial_stock WHERE activity_id = ?', [activityId]);
}

describe('the settle floor writes what settlement writes', () => {
  for (const orderEvents of [true, false]) {
    it(`the same rows for the same batch, order events ${orderEvents ? 'on' : 'off'}`, async () => {
      const activityId = orderEvents ? '8810000001' : '8810000002';
      const target: SettleTarget = {
        activityId,
        skuId: '5',
        paymentTimeoutSeconds: 600,
        orderEvents,
        orderEventsPerRow: 3,
      };
      await db.query(
        'INSERT INTO seckill_stock (activity_id, sku_id, initial_stock, available) VALUES (?, 5, 100, 100)',
        [activityId],
      );
      const batch = reservations(activityId, 8);

      const outcomes = await settleBatch(db, target, batch, { firstDelivery: true });
      expect([...outcomes.values()]).toEqual(Array(8).fill('settled'));
      const settled = await rowsOf(activityId);

      await reset(activityId);
      await runSettleFloor(db, target, batch, { batchSize: batch.length, connections: 1 });
      const floor = await rowsOf(activityId);

      expect(floor).toEqual(settled);
      expect(settled.orders).toHaveLength(8);
      expect(settled.stockLog).toHaveLength(8);
      // 8 events at 3 a row: 3 batch rows with events on, none off.
      expect(settled.outbox).toHaveLength(orderEvents ? 3 : 0);
      expect(settled.stock).toEqual([{ initial: 100, available: 100 - 12 }]);
    });
  }

  it('in batches: every reservation written once, the stock deducted by all of them', async () => {
    const activityId = '8810000003';
    const target: SettleTarget = { activityId, skuId: '5', paymentTimeoutSeconds: 600, orderEvents: true };
    await db.query('INSERT INTO seckill_stock (activity_id, sku_id, initial_stock, available) VALUES (?, 5, 50, 50)', [
      activityId,
    ]);
    const all = reservations(activityId, 21);
    await runSettleFloor(db, target, all, { batchSize: 5, connections: 2 });
    const rows = await rowsOf(activityId);
    expect(rows.orders.map((o) => o.reservation_id)).toEqual(all.map((e) => e.reservationId).sort());
    expect(rows.stockLog).toHaveLength(21);
    // One outbox row per batch (no per-row bound): 5 batches.
    expect(rows.outbox.map((o) => Number(o.events))).toEqual(expect.arrayContaining([5, 5, 5, 5, 1]));
    expect(rows.stock).toEqual([{ initial: 50, available: 50 - 31 }]);
  });
});
