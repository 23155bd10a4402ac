/**
 * Downstream order events (docs/design.md §10): written with the order change, delivered at least once and
 * in order per order to a real local HTTP receiver that fails some deliveries; parked after
 * ORDER_EVENTS_MAX_ATTEMPTS and sent again by the admin; a worker SIGKILLed mid-delivery loses none.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../origin/platform/config.js';
import { backoffMs, OrderEventWorker, type OrderEventWorkerDeps } from '../../../origin/orders/order-event-worker.js';
import { orderNoFor, settleBatch } from '../../../origin/settlement/settle.js';
import { type Arrival, startEventReceiver, typesPerOrder } from '../../helpers/event-receiver.js';
import { count, pay, reserveAll, users } from '../../helpers/lifecycle.js';
import { startTestOrigin, TEST_SECRETS, testConfig, waitFor, type TestOrigin } from '../../helpers/origin.js';
import { REDIS_URL } from '../../helpers/db.js';

const SECRET = 'test-order-events-secret-0123';
const FAST = {
  ORDER_EVENTS_SECRET: SECRET,
  ORDER_EVENTS_POLL_MS: '30',
  ORDER_EVENTS_BACKOFF_MS: '20',
  ORDER_EVENTS_BACKOFF_MAX_MS: '200',
  ORDER_EVENTS_TIMEOUT_MS: '2000',
  ORDER_EVENTS_LEASE_MS: '3000',
  TIMEOUT_SCAN_MS: '50',
  // A busy shared machine must not turn a reservation into 503 unavailable: not what is tested here.
  REDIS_COMMAND_TIMEOUT_MS: '2000',
};

/** What a worker built by hand uses, from the running origin's pieces (as server.ts builds it). */
function workerDeps(o: TestOrigin): OrderEventWorkerDeps {
  return { db: o.origin.parts.db, log: o.origin.parts.log, metrics: o.origin.parts.metrics };
}

/** Every order's first arrival of a later event comes after its `order.created` was delivered. */
function outOfOrder(arrivals: Arrival[]): string[] {
  const createdAt = new Map<string, number>();
  const bad: string[] = [];
  arrivals.forEach((a, i) => {
    if (a.event.type === 'order.created') {
      if (a.answered < 300 && !createdAt.has(a.event.orderNo)) createdAt.set(a.event.orderNo, i);
    } else if (!createdAt.has(a.event.orderNo)) bad.push(a.event.id);
  });
  return bad;
}

async function ordersOf(t: TestOrigin, activityId: string): Promise<{ order_no: string; user_id: string }[]> {
  const [rows] = (await t.db.pool.query('SELECT order_no, user_id FROM seckill_order WHERE activity_id = ?', [
    activityId,
  ])) as any;
  return rows;
}

describe('order events with a receiver that fails some deliveries', () => {
  // Deterministic failures: the first two tries of every third event fail (503, or no answer in
  // time), and every delivery of one chosen user's events fails until it is healed.
  const DOOMED_USER = '777001';
  let healed = false;
  let receiver: Awaited<ReturnType<typeof startEventReceiver>>;
  let t: TestOrigin;
  beforeAll(async () => {
    let n = 0;
    const flaky = new Map<string, boolean>();
    receiver = await startEventReceiver(SECRET, (e, nth) => {
      if (e.userId === DOOMED_USER) return { status: healed ? 204 : 500 };
      if (!flaky.has(e.id)) flaky.set(e.id, n++ % 3 === 0);
      if (flaky.get(e.id) && nth <= 2) return nth === 1 ? { status: 503 } : { status: 204, delayMs: 2_500 };
      return { status: 204 };
    });
    t = await startTestOrigin({ ...FAST, ORDER_EVENTS_URL: receiver.url, ORDER_EVENTS_MAX_ATTEMPTS: '4' });
  });
  afterAll(async () => {
    await t?.stop();
    await receiver?.close();
  });

  it('every order.created / order.paid / order.timed_out arrives, signed, in order per order; none lost', async () => {
    const N = 30;
    const { activityId } = await t.sale({ stock: N, paymentTimeoutSeconds: 900 });
    expect((await reserveAll(t, activityId, users(5_000, N))).every((r) => r.status === 202)).toBe(true);
    await waitFor(
      () => count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
      (n) => n === N,
    );
    const orders = await ordersOf(t, activityId);
    // Half are paid; the other half time out (their deadline moved to now).
    const paid = orders.slice(0, N / 2);
    const timedOut = orders.slice(N / 2);
    for (const o of paid) expect((await pay(t, o.order_no)).status).toBe(200);
    await t.db.pool.query(
      `UPDATE seckill_order SET expire_at = NOW(3) WHERE order_no IN (${timedOut.map(() => '?').join(',')})`,
      timedOut.map((o) => o.order_no),
    );
    const expected = new Map<string, { type: string; orderNo: string; userId: string }>();
    for (const o of orders)
      expected.set(`${o.order_no}:order.created`, {
        type: 'order.created',
        orderNo: o.order_no,
        userId: String(o.user_id),
      });
    for (const o of paid)
      expected.set(`${o.order_no}:order.paid`, { type: 'order.paid', orderNo: o.order_no, userId: String(o.user_id) });
    for (const o of timedOut)
      expected.set(`${o.order_no}:order.timed_out`, {
        type: 'order.timed_out',
        orderNo: o.order_no,
        userId: String(o.user_id),
      });

    await waitFor(
      async () => receiver.delivered(),
      (d) => [...expected.keys()].every((id) => d.has(id)),
      60_000,
    );
    const delivered = receiver.delivered();
    for (const [id, want] of expected) {
      const got = delivered.get(id)!;
      expect(got).toMatchObject({ id, ...want, activityId, quantity: 1 });
      expect(Number.isNaN(Date.parse(got.at))).toBe(false);
    }
    const mine = receiver.arrivals.filter((a) => expected.has(a.event.id));
    expect(mine.every((a) => a.signed)).toBe(true);
    expect(new Set(mine.map((a) => a.event.id)).size).toBe(expected.size); // nothing else for this sale
    expect(outOfOrder(mine)).toEqual([]);
    for (const [, types] of typesPerOrder(mine)) expect(types[0]).toBe('order.created');
    // Failures really happened and were retried.
    expect(mine.filter((a) => a.answered >= 500).length).toBeGreaterThanOrEqual(expected.size / 3 - 1);
    await waitFor(
      () =>
        count(
          t,
          'SELECT COUNT(*) FROM order_event_outbox WHERE order_no IN (SELECT order_no FROM seckill_order WHERE activity_id = ?)',
          [activityId],
        ),
      (n) => n === 0,
    );
  });

  it('an event failing ORDER_EVENTS_MAX_ATTEMPTS times is parked, holds its order, and the admin sends it again', async () => {
    const { activityId } = await t.sale({ stock: 1 });
    const [one] = await reserveAll(t, activityId, [DOOMED_USER]);
    expect(one!.status).toBe(202);
    const [order] = await waitFor(
      () => ordersOf(t, activityId),
      (rows) => rows.length === 1,
    );
    const doomedOrder = order!.order_no;
    const createdId = `${doomedOrder}:order.created`;
    const parked = await waitFor(
      async () => (await (await t.admin('GET', '/admin/order-events?status=parked')).json()) as any,
      (body) => body.events.some((e: any) => e.id === createdId),
    );
    const listed = parked.events.find((e: any) => e.id === createdId);
    expect(listed).toMatchObject({ type: 'order.created', orderNo: doomedOrder, status: 'parked', attempts: 4 });
    expect(listed.lastError).toBe('HTTP 500');
    expect(receiver.arrivals.filter((a) => a.event.id === createdId).length).toBe(4);
    // Scrape-time reads are reused for METRICS_CACHE_MS (the console's series job reads them too):
    // the gauge shows the parked event on a read made after it was parked.
    await waitFor(
      async () => (await fetch(`${t.url}/metrics`)).text(),
      (metrics) => /^seckill_order_events_parked 1$/m.test(metrics),
      10_000,
      200,
    );

    // The order is paid meanwhile: its event waits behind the parked one (order per order).
    expect((await pay(t, doomedOrder)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.arrivals.some((a) => a.event.id === `${doomedOrder}:order.paid`)).toBe(false);
    expect(
      await count(t, 'SELECT COUNT(*) FROM order_event_outbox WHERE event_id = ? AND status = 0 AND attempts = 0', [
        `${doomedOrder}:order.paid`,
      ]),
    ).toBe(1);

    // Bad admin input changes nothing.
    const bad = [
      await t.admin('GET', '/admin/order-events?status=lost'),
      await t.admin('GET', '/admin/order-events?limit=0'),
      await t.admin('POST', '/admin/order-events/not-an-id/retry'),
    ];
    for (const res of bad) expect([res.status, ((await res.json()) as any).error]).toEqual([400, 'bad_request']);
    const unknown = await t.admin('POST', '/admin/order-events/ABC123:order.created/retry');
    expect([unknown.status, ((await unknown.json()) as any).error]).toEqual([404, 'not_found']);
    const notParked = await t.admin('POST', `/admin/order-events/${doomedOrder}:order.paid/retry`);
    expect([notParked.status, ((await notParked.json()) as any).error]).toEqual([409, 'conflict']);
    expect((await t.admin('GET', '/admin/order-events', undefined, 'wrong-token-123')).status).toBe(401);

    healed = true;
    const retried = await t.admin('POST', `/admin/order-events/${createdId}/retry`);
    expect(retried.status).toBe(200);
    expect(await retried.json()).toEqual({ id: createdId, status: 'pending' });
    await waitFor(
      async () => receiver.delivered(),
      (d) => d.has(createdId) && d.has(`${doomedOrder}:order.paid`),
    );
    const forOrder = receiver.arrivals.filter((a) => a.event.orderNo === doomedOrder);
    expect(outOfOrder(forOrder)).toEqual([]);
    expect((await (await t.admin('GET', '/admin/order-events?status=parked')).json()) as any).toEqual({
      events: [],
      next: null,
    });
  });
});

describe('the delivering process killed with SIGKILL mid-delivery', () => {
  it('another process delivers what was in flight and the rest: every order.created arrives', async () => {
    const N = 40;
    // Slow answers keep deliveries in flight when the kill comes.
    const receiver = await startEventReceiver(SECRET, () => ({ status: 204, delayMs: 150 }));
    const writer = await startTestOrigin({ ORIGIN_ROLE: 'http', REDIS_COMMAND_TIMEOUT_MS: '2000' });
    const consumers = () =>
      spawn(process.execPath, ['--import', 'tsx', 'origin/main.ts'], {
        env: {
          ...process.env,
          ...TEST_SECRETS,
          ...FAST,
          ORDER_EVENTS_URL: receiver.url,
          ORDER_EVENTS_LEASE_MS: '1500',
          ORDER_EVENTS_TIMEOUT_MS: '1000',
          ORDER_EVENTS_CONCURRENCY: '4',
          ORIGIN_ROLE: 'consumers',
          MYSQL_URL: writer.db.url,
          REDIS_URL,
          LOG_LEVEL: 'silent',
          SETTLE_WORKERS: '1',
          SETTLE_DISCOVERY_MS: '100',
          SETTLE_CLAIM_IDLE_MS: '500',
        },
        stdio: 'ignore',
      });
    let second: ReturnType<typeof consumers> | null = null;
    try {
      const { activityId } = await writer.sale({ stock: N });
      expect((await reserveAll(writer, activityId, users(9_000, N))).every((r) => r.status === 202)).toBe(true);
      const first = consumers();
      await waitFor(
        async () => ({ arrived: receiver.arrivals.length, inFlight: receiver.inFlight() }),
        (s) => s.arrived >= 4 && s.inFlight > 0,
        60_000,
        5,
      );
      first.kill('SIGKILL');
      await once(first, 'exit');
      const beforeRestart = receiver.delivered().size;
      expect(beforeRestart).toBeLessThan(N);
      second = consumers();
      await waitFor(
        () => count(writer, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
        (n) => n === N,
        60_000,
      );
      const orders = await ordersOf(writer, activityId);
      await waitFor(
        async () => receiver.delivered(),
        (d) => orders.every((o) => d.has(`${o.order_no}:order.created`)),
        60_000,
      );
      const ids = new Set(receiver.arrivals.map((a) => a.event.id));
      expect(ids).toEqual(new Set(orders.map((o) => `${o.order_no}:order.created`)));
      await waitFor(
        () => count(writer, 'SELECT COUNT(*) FROM order_event_outbox'),
        (n) => n === 0,
      );
    } finally {
      if (second) {
        second.kill('SIGTERM');
        await once(second, 'exit');
      }
      await writer.stop();
      await receiver.close();
    }
  });
});

describe('backoff', () => {
  it('doubles per failed try up to the cap, with jitter between half and all of it', () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n, 1000, 5000, () => 1))).toEqual([1000, 2000, 4000, 5000]);
    expect([1, 2, 3, 4].map((n) => backoffMs(n, 1000, 5000, () => 0))).toEqual([500, 1000, 2000, 2500]);
  });
});

describe('with ORDER_EVENTS_URL unset', () => {
  it('settlement, payment and timeout write no event rows', async () => {
    const t = await startTestOrigin({ TIMEOUT_SCAN_MS: '50', REDIS_COMMAND_TIMEOUT_MS: '2000' });
    try {
      const { activityId } = await t.sale({ stock: 2 });
      await reserveAll(t, activityId, ['8001', '8002']);
      const orders = await waitFor(
        () => ordersOf(t, activityId),
        (rows) => rows.length === 2,
      );
      expect((await pay(t, orders[0]!.order_no)).status).toBe(200);
      await t.db.pool.query('UPDATE seckill_order SET expire_at = NOW(3) WHERE order_no = ?', [orders[1]!.order_no]);
      await waitFor(
        () => count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ? AND status = 2', [activityId]),
        (n) => n === 1,
      );
      expect(await count(t, 'SELECT COUNT(*) FROM order_event_outbox')).toBe(0);
      expect(t.origin.lifecycle?.orderEvents).toBeNull();
    } finally {
      await t.stop();
    }
  });
});

describe('order events configuration', () => {
  it('needs a secret with the URL, and a lease longer than the POST timeout', () => {
    const url = 'http://127.0.0.1:9/events';
    expect(() => loadConfig({ ORDER_EVENTS_URL: url })).toThrow(/ORDER_EVENTS_SECRET/);
    expect(() => loadConfig({ ORDER_EVENTS_URL: url, ORDER_EVENTS_SECRET: 'short' })).toThrow(/ORDER_EVENTS_SECRET/);
    expect(() =>
      loadConfig({ ORDER_EVENTS_URL: url, ORDER_EVENTS_SECRET: SECRET, ORDER_EVENTS_TIMEOUT_MS: '30000' }),
    ).toThrow(/ORDER_EVENTS_LEASE_MS/);
    expect(() => loadConfig({ ORDER_EVENTS_URL: 'not a url', ORDER_EVENTS_SECRET: SECRET })).toThrow(
      /ORDER_EVENTS_URL/,
    );
    expect(() => loadConfig({ ORDER_EVENTS_URL: 'ftp://127.0.0.1/events', ORDER_EVENTS_SECRET: SECRET })).toThrow(
      /ORDER_EVENTS_URL.*http/,
    );
    expect(loadConfig({ ORDER_EVENTS_URL: url, ORDER_EVENTS_SECRET: SECRET })).toMatchObject({
      ORDER_EVENTS_MAX_ATTEMPTS: 10,
      ORDER_EVENTS_LEASE_MS: 30_000,
      ORDER_EVENTS_TIMEOUT_MS: 5_000,
    });
  });
});

describe("a settlement batch's order.created events", () => {
  it('are rows of at most ORDER_EVENTS_BATCH_SIZE events: a round takes one row, the others wait for the next rounds', async () => {
    const t = await startTestOrigin({ ORIGIN_ROLE: 'http', REDIS_COMMAND_TIMEOUT_MS: '2000' });
    const receiver = await startEventReceiver(SECRET, () => ({ status: 204 }));
    try {
      const { activityId, skuId } = await t.sale({ stock: 5 });
      const target = { activityId, skuId, paymentTimeoutSeconds: 900, orderEvents: true, orderEventsPerRow: 2 };
      const events = ['6101', '6102', '6103', '6104', '6105'].map((userId, i) => ({
        streamId: `1-${i}`,
        reservationId: `${activityId}-${String(i).padStart(32, '0')}`,
        requestId: `q${i}`,
        userId,
        quantity: 1,
        traceId: '',
        ts: Date.now(),
      }));
      expect([...(await settleBatch(t.origin.parts.db, target, events)).values()]).toEqual(Array(5).fill('settled'));
      const rows = async () => {
        const [r] = (await t.db.pool.query('SELECT event_id, events FROM order_event_outbox ORDER BY seq')) as any;
        return r.map((x: any) => ({ batch: String(x.event_id).startsWith('batch:'), events: Number(x.events) }));
      };
      // One INSERT, three rows in the batch's order.
      expect(await rows()).toEqual([
        { batch: true, events: 2 },
        { batch: true, events: 2 },
        { batch: true, events: 1 },
      ]);
      const worker = new OrderEventWorker(workerDeps(t), {
        ...testConfig(t.db.url, { ORDER_EVENTS_URL: receiver.url, ...FAST, ORDER_EVENTS_BATCH_SIZE: '2' }),
        ORDER_EVENTS_URL: receiver.url,
      });
      // The POSTs of one round run concurrently: compared per round, in any order.
      const delivered = (from: number) =>
        receiver.arrivals
          .slice(from)
          .map((a) => a.event.userId)
          .sort();
      expect(await worker.round()).toBe(true); // a full round: more may wait
      expect(delivered(0)).toEqual(['6101', '6102']);
      expect(await rows()).toHaveLength(2);
      await worker.round();
      expect(delivered(2)).toEqual(['6103', '6104']);
      expect(await worker.round()).toBe(false);
      expect(delivered(4)).toEqual(['6105']);
      expect(await rows()).toEqual([]);
      expect(receiver.arrivals.map((a) => a.event.orderNo).sort()).toEqual(
        events.map((e) => orderNoFor(e.reservationId)).sort(),
      );
      await worker.stop();
    } finally {
      await t.stop();
      await receiver.close();
    }
  });

  it('are one outbox row; delivered ones go, a failed one becomes a row of its own and is retried alone', async () => {
    // HTTP role: no worker runs; the test drives settlement and worker rounds by hand.
    const t = await startTestOrigin({ ORIGIN_ROLE: 'http', REDIS_COMMAND_TIMEOUT_MS: '2000' });
    const failUser = '6003';
    let failing = true;
    const receiver = await startEventReceiver(SECRET, (e) => ({
      status: e.userId === failUser && failing ? 503 : 204,
    }));
    try {
      const { activityId, skuId } = await t.sale({ stock: 3 });
      const target = { activityId, skuId, paymentTimeoutSeconds: 900, orderEvents: true };
      const events = ['6001', '6002', failUser].map((userId, i) => ({
        streamId: `1-${i}`,
        reservationId: `${activityId}-${String(i).padStart(32, '0')}`,
        requestId: `q${i}`,
        userId,
        quantity: 1,
        traceId: '',
        ts: Date.now(),
      }));
      const outcomes = await settleBatch(t.origin.parts.db, target, events);
      expect([...outcomes.values()]).toEqual(['settled', 'settled', 'settled']);
      const rows = async () => {
        const [r] = (await t.db.pool.query(
          'SELECT event_id, events, status, attempts FROM order_event_outbox ORDER BY seq',
        )) as any;
        return r.map((x: any) => ({
          ...x,
          events: Number(x.events),
          status: Number(x.status),
          attempts: Number(x.attempts),
        }));
      };
      const [batch] = await rows();
      expect(batch).toMatchObject({ events: 3, status: 0, attempts: 0 });
      expect(batch.event_id).toMatch(/^batch:[0-9a-f]{24}$/);

      const worker = new OrderEventWorker(workerDeps(t), {
        ...testConfig(t.db.url, {
          ORDER_EVENTS_URL: receiver.url,
          ...FAST,
          ORDER_EVENTS_BACKOFF_MS: '1',
          ORDER_EVENTS_BACKOFF_MAX_MS: '1',
        }),
        ORDER_EVENTS_URL: receiver.url,
      });
      // seckill_order_events_delivered_total counts delivered events (counted once per round and type).
      const delivered = async () =>
        (await t.origin.parts.metrics.orderEventsDelivered.get()).values.find((v) => v.labels.type === 'order.created')
          ?.value ?? 0;
      const deliveredBefore = await delivered();
      await worker.round();
      expect((await delivered()) - deliveredBefore).toBe(2);
      const orderNo = orderNoFor(events[2]!.reservationId);
      expect(await rows()).toEqual([{ event_id: `${orderNo}:order.created`, events: 1, status: 0, attempts: 1 }]);
      expect(receiver.arrivals.map((a) => [a.event.userId, a.answered])).toEqual(
        expect.arrayContaining([
          ['6001', 204],
          ['6002', 204],
          [failUser, 503],
        ]),
      );
      expect(receiver.arrivals).toHaveLength(3);

      failing = false;
      await new Promise((r) => setTimeout(r, 20)); // past its 1 ms backoff
      await worker.round();
      expect(await rows()).toEqual([]);
      expect((await delivered()) - deliveredBefore).toBe(3);
      expect(receiver.arrivals).toHaveLength(4); // only the failed one again
      expect(receiver.arrivals[3]!.event).toMatchObject({ id: `${orderNo}:order.created`, userId: failUser });
    } finally {
      await t.stop();
      await receiver.close();
    }
  });
});

describe('settlement first', () => {
  it('the worker skips rounds while settlement is busy, for ORDER_EVENTS_YIELD_MS at most, and delivers at once when it is not', async () => {
    // HTTP role: no worker runs; the test drives settlement and worker rounds by hand.
    const t = await startTestOrigin({ ORIGIN_ROLE: 'http', REDIS_COMMAND_TIMEOUT_MS: '2000' });
    const receiver = await startEventReceiver(SECRET, () => ({ status: 204 }));
    let settling = true;
    try {
      const { activityId, skuId } = await t.sale({ stock: 3 });
      const target = { activityId, skuId, paymentTimeoutSeconds: 900, orderEvents: true };
      const settle = (i: number) =>
        settleBatch(t.origin.parts.db, target, [
          {
            streamId: `1-${i}`,
            reservationId: `${activityId}-${String(i).padStart(32, '0')}`,
            requestId: `q${i}`,
            userId: String(7001 + i),
            quantity: 1,
            traceId: '',
            ts: Date.now(),
          },
        ]);
      const yieldMs = 400;
      const worker = new OrderEventWorker(
        { ...workerDeps(t), settling: () => settling },
        {
          ...testConfig(t.db.url, { ORDER_EVENTS_URL: receiver.url, ...FAST, ORDER_EVENTS_YIELD_MS: String(yieldMs) }),
          ORDER_EVENTS_URL: receiver.url,
        },
      );
      await settle(0);
      const waitingFrom = Date.now();
      await worker.round(); // settlement busy: the round waits
      await worker.round();
      expect(receiver.arrivals).toHaveLength(0);
      await new Promise((r) => setTimeout(r, yieldMs - (Date.now() - waitingFrom) + 50));
      await worker.round(); // waited ORDER_EVENTS_YIELD_MS in a row: delivers although settlement is still busy
      expect(receiver.arrivals).toHaveLength(1);

      await settle(1);
      await worker.round(); // a new wait begins
      expect(receiver.arrivals).toHaveLength(1);

      settling = false;
      await settle(2);
      await worker.round(); // settlement idle: delivers at once, what waited too
      expect(receiver.arrivals.map((a) => a.event.userId)).toEqual(['7001', '7002', '7003']);
    } finally {
      await t.stop();
      await receiver.close();
    }
  });
});

describe('one delivery try', () => {
  it('gives up after ORDER_EVENTS_TIMEOUT_MS with a reason, and sends the URL’s credentials as Basic auth', async () => {
    const t = await startTestOrigin({ ORIGIN_ROLE: 'http', REDIS_COMMAND_TIMEOUT_MS: '2000' });
    let slow = true;
    const receiver = await startEventReceiver(SECRET, () => (slow ? { status: 204, delayMs: 600 } : { status: 204 }));
    // The receiver's URL with a user and a percent-encoded password.
    const url = receiver.url.replace('http://', 'http://events:p%40ss@');
    try {
      const { activityId, skuId } = await t.sale({ stock: 1 });
      const target = { activityId, skuId, paymentTimeoutSeconds: 900, orderEvents: true };
      const reservationId = `${activityId}-${'0'.repeat(31)}1`;
      const reservation = {
        streamId: '1-0',
        reservationId,
        requestId: 'q',
        userId: '8001',
        quantity: 1,
        traceId: '',
        ts: 0,
      };
      expect([...(await settleBatch(t.origin.parts.db, target, [reservation])).values()]).toEqual(['settled']);
      const worker = new OrderEventWorker(workerDeps(t), {
        ...testConfig(t.db.url, {
          ORDER_EVENTS_URL: url,
          ...FAST,
          ORDER_EVENTS_TIMEOUT_MS: '150',
          ORDER_EVENTS_BACKOFF_MS: '1',
          ORDER_EVENTS_BACKOFF_MAX_MS: '1',
        }),
        ORDER_EVENTS_URL: url,
      });
      const outbox = async () => {
        const [r] = (await t.db.pool.query('SELECT attempts, last_error FROM order_event_outbox')) as any;
        return r.map((x: any) => ({ attempts: Number(x.attempts), lastError: x.last_error }));
      };
      try {
        await worker.round();
        expect(await outbox()).toEqual([{ attempts: 1, lastError: 'no answer within 150 ms' }]);

        slow = false;
        await new Promise((r) => setTimeout(r, 20)); // past its 1 ms backoff
        await worker.round();
        expect(await outbox()).toEqual([]);
        const answered = receiver.arrivals.filter(
          (a) => a.answered === 204 && a.event.orderNo === orderNoFor(reservationId),
        );
        expect(answered.length).toBeGreaterThanOrEqual(1);
        const basic = `Basic ${Buffer.from('events:p@ss').toString('base64')}`;
        expect(receiver.arrivals.every((a) => a.authorization === basic && a.signed)).toBe(true);
      } finally {
        await worker.stop();
      }
    } finally {
      await t.stop();
      await receiver.close();
    }
  });
});
