/**
 * A shadow sale (docs/rehearsal.md "A shadow rehearsal on the production stack") on one real stack
 * beside a real sale, both driven at the same time through the real edge (workerd) and origin
 * (Redis, MariaDB): the real sale's orders, stock log, stock and order events are exactly what the
 * real buyers made; every shadow order is in the shadow tables and none in the real ones; the real
 * event receiver gets no shadow event; a real token is refused on the shadow sale and a shadow token
 * on the real one (edge and origin, 403 shadow_mismatch), on every path that reads or polls too; a shadow payment pays only a shadow order;
 * the cleanup leaves no shadow row or Redis key. Also: `shadow` cannot be set or cleared by PATCH.
 */
import { signEdgeRequest } from '../../contract/signing.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { scalar } from '../helpers/db.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';
import { buy as buyAt, inParallel, tally, userToken } from '../helpers/buyers.js';
import { entryIdOf } from '../../contract/ids.js';
import { startEventReceiver } from '../helpers/event-receiver.js';
import { pay } from '../helpers/lifecycle.js';
import { uniqueId } from '../helpers/ids.js';
import { waitFor } from '../helpers/origin.js';
import { startTestStack, type TestStack } from '../helpers/stack.js';

const EVENTS_SECRET = 'shadow-test-events-secret-0123';
let stack: TestStack;
let realEvents: Awaited<ReturnType<typeof startEventReceiver>>;
let shadowEvents: Awaited<ReturnType<typeof startEventReceiver>>;

beforeAll(async () => {
  realEvents = await startEventReceiver(EVENTS_SECRET, () => ({ status: 204 }));
  shadowEvents = await startEventReceiver(EVENTS_SECRET, () => ({ status: 204 }));
  stack = await startTestStack({
    originEnv: {
      ORDER_EVENTS_URL: realEvents.url,
      SHADOW_ORDER_EVENTS_URL: shadowEvents.url,
      ORDER_EVENTS_SECRET: EVENTS_SECRET,
      ORDER_EVENTS_POLL_MS: '100',
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await realEvents?.close();
  await shadowEvents?.close();
});

/** A real or shadow buyer through this file's edge (test/helpers/buyers.ts). */
const buy = (activityId: string, userId: string, shadow: boolean, quantity = 1) =>
  buyAt(stack.edge.url, activityId, userId, shadow, quantity);

async function shadowSale(stock: number, extra: Record<string, unknown> = {}) {
  const activityId = uniqueId();
  const now = Date.now();
  const created = await stack.origin.admin('POST', '/admin/activities', {
    activityId,
    skuId: uniqueId(),
    title: `shadow rehearsal ${activityId}`,
    stock,
    startsAt: new Date(now - 1000).toISOString(),
    endsAt: new Date(now + 3_600_000).toISOString(),
    shadow: true,
    ...extra,
  });
  expect(created.status).toBe(201);
  const warmed = await stack.origin.admin('POST', `/admin/activities/${activityId}/warmup`);
  expect(warmed.status).toBe(200);
  return activityId;
}

const REAL_TABLES = ['seckill_order', 'seckill_stock_log', 'stock_sync_outbox', 'order_event_outbox', 'seckill_refund'];
const SHADOW_TABLES = REAL_TABLES.map((t) => `shadow_${t}`);
const count = (table: string, activityId: string) =>
  scalar(stack.origin.db.pool, `SELECT COUNT(*) FROM ${table} WHERE activity_id = ?`, [activityId]);

it('a real sale and a shadow sale at once: each ledger holds exactly its own buyers, events go apart, cleanup leaves nothing', async () => {
  const db = stack.origin.db.pool;
  const { activityId: real } = await stack.origin.sale({ stock: 20 });
  const shadow = await shadowSale(30);

  // The same user ids on both sides on purpose: a shadow user is a rehearsal's, whoever else has that id.
  const realUsers = Array.from({ length: 40 }, (_, i) => String(8_100_000 + i));
  const shadowUsers = Array.from({ length: 60 }, (_, i) => String(8_100_000 + i));
  const [realResults, shadowResults] = await Promise.all([
    inParallel(realUsers, 3, (u) => buy(real, u, false)),
    inParallel(shadowUsers, 3, (u) => buy(shadow, u, true)),
  ]);
  expect(tally(realResults)).toEqual({ '202 queued': 20, '409 sold_out': 20 });
  expect(tally(shadowResults)).toEqual({ '202 queued': 30, '409 sold_out': 30 });
  const realWinners = realResults.filter((r) => r.status === 202);
  const shadowWinners = shadowResults.filter((r) => r.status === 202);

  await waitFor(
    async () => [await count('seckill_order', real), await count('shadow_seckill_order', shadow)],
    ([a, b]) => a === 20 && b === 30,
    20_000,
  );

  // The real ledger: exactly the real winners' orders and DEDUCT rows, the stock row at 0.
  const [realOrders] = (await db.query(
    'SELECT user_id, reservation_id, order_no, status FROM seckill_order WHERE activity_id = ? ORDER BY user_id',
    [real],
  )) as any;
  expect(realOrders.map((o: any) => [String(o.user_id), o.reservation_id])).toEqual(
    realWinners.map((w) => [w.userId, w.body.reservationId]).sort((a, b) => Number(a[0]) - Number(b[0])),
  );
  expect(realOrders.every((o: any) => /^[0-9A-F]{24}$/.test(o.order_no) && Number(o.status) === 0)).toBe(true);
  const [realLog] = (await db.query(
    'SELECT biz_id, change_type, quantity FROM seckill_stock_log WHERE activity_id = ? ORDER BY biz_id',
    [real],
  )) as any;
  expect(realLog.map((r: any) => [r.biz_id, r.change_type, Number(r.quantity)])).toEqual(
    realWinners
      .map((w) => [w.body.reservationId, 'DEDUCT', 1])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  );
  expect(await scalar(db, 'SELECT available FROM seckill_stock WHERE activity_id = ?', [real])).toBe(0);

  // The shadow ledger: every shadow order there, none in the real tables; no real row among them.
  const [shadowOrders] = (await db.query(
    'SELECT user_id, reservation_id, order_no FROM shadow_seckill_order WHERE activity_id = ?',
    [shadow],
  )) as any;
  expect(new Set(shadowOrders.map((o: any) => o.reservation_id))).toEqual(
    new Set(shadowWinners.map((w) => w.body.reservationId)),
  );
  expect(shadowOrders.every((o: any) => /^S[0-9A-F]{24}$/.test(o.order_no))).toBe(true);
  expect(await count('shadow_seckill_stock_log', shadow)).toBe(30);
  for (const table of REAL_TABLES)
    expect(await scalar(db, `SELECT COUNT(*) FROM ${table} WHERE activity_id = ?`, [shadow])).toBe(0);
  for (const table of SHADOW_TABLES) expect(await count(table, real)).toBe(0);
  expect(await scalar(db, 'SELECT COUNT(*) FROM seckill_order')).toBe(20);

  // Order events: the real receiver gets exactly the 20 real orders, the shadow one the 30 shadow ones.
  await waitFor(
    async () => [realEvents.arrivals.length, shadowEvents.arrivals.length],
    ([a, b]) => a! >= 20 && b! >= 30,
    20_000,
  );
  const realOrderNos = new Set(realOrders.map((o: any) => o.order_no));
  expect(realEvents.arrivals.every((a) => a.event.activityId === real && a.event.type === 'order.created')).toBe(true);
  expect(new Set(realEvents.arrivals.map((a) => a.event.orderNo))).toEqual(realOrderNos);
  expect(shadowEvents.arrivals.every((a) => a.event.activityId === shadow)).toBe(true);
  expect(new Set(shadowEvents.arrivals.map((a) => a.event.orderNo))).toEqual(
    new Set(shadowOrders.map((o: any) => o.order_no)),
  );

  // Shadow payments: each pays its shadow order only; the real orders stay PENDING.
  for (const o of shadowOrders) expect((await pay(stack.origin, o.order_no)).status).toBe(200);
  expect(
    await scalar(db, 'SELECT COUNT(*) FROM shadow_seckill_order WHERE activity_id = ? AND status = 1', [shadow]),
  ).toBe(30);
  expect(await scalar(db, 'SELECT COUNT(*) FROM seckill_order WHERE status <> 0')).toBe(0);
  // A shadow order number never finds a real order: an unknown shadow number is 404, nothing paid.
  const stray = await pay(stack.origin, `S${realOrders[0].order_no}`);
  expect(stray.status).toBe(404);
  await waitFor(
    () => Promise.resolve(shadowEvents.arrivals.filter((a) => a.event.type === 'order.paid').length),
    (n) => n === 30,
    20_000,
  );
  expect(realEvents.arrivals.filter((a) => a.event.activityId !== real)).toEqual([]);
  expect(realEvents.arrivals.filter((a) => a.event.type !== 'order.created')).toEqual([]);

  // Metrics: shadow traffic is counted in series of its own, so the real success rate never counts it.
  const metrics = await (await fetch(`${stack.origin.url}/metrics`)).text();
  const sum = (name: string, where = '') =>
    [...metrics.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))]
      .filter((m) => m[1]!.includes(where))
      .reduce((n, m) => n + Number(m[2]), 0);
  // (A reservation whose answer came after the edge's timeout counts as `timeout`, its retry as
  // `repeat`: on a busy box the answers per outcome are bounded, the orders settled exact.)
  expect(sum('seckill_shadow_order_answers_total')).toBeGreaterThanOrEqual(30);
  expect(sum('seckill_shadow_order_answers_total', 'outcome="reserved"')).toBeLessThanOrEqual(30);
  expect(sum('seckill_order_answers_total', 'outcome="reserved"')).toBeLessThanOrEqual(20);
  expect(metrics).toMatch(/^seckill_shadow_orders_settled_total 30$/m);
  expect(metrics).toMatch(/^seckill_orders_settled_total 20$/m);
  expect(metrics).not.toMatch(/^seckill_order_lifecycle_total\{transition="payment_paid"\}/m);
  expect(metrics).toMatch(/^seckill_shadow_order_lifecycle_total\{transition="payment_paid"\} 30$/m);
  // The per-sale alert rules leave out the sales this gauge names (ops/prometheus/alerts.yml).
  expect(metrics).toMatch(new RegExp(`^seckill_shadow_sale\\{activity="${shadow}"\\} 1$`, 'm'));
  expect(metrics).not.toMatch(new RegExp(`^seckill_shadow_sale\\{activity="${real}"\\}`, 'm'));

  // Cleanup of the shadow sale: stopped, then every shadow row and key gone, the real sale untouched.
  expect((await stack.origin.admin('PATCH', `/admin/activities/${shadow}`, { state: 'stopped' })).status).toBe(200);
  const cleaned = await stack.origin.admin('POST', `/admin/activities/${shadow}/cleanup`);
  expect(cleaned.status).toBe(200);
  expect(((await cleaned.json()) as any).shadow).toBe(true);
  for (const table of [...SHADOW_TABLES, 'seckill_dead_letter']) expect(await count(table, shadow)).toBe(0);
  expect(await stack.origin.redis.keys(`sk:{${shadow}:*`)).toEqual([]);
  expect(await stack.origin.redis.hexists('sk:activities', shadow)).toBe(0);
  const checklist = (await (
    await stack.origin.admin('GET', `/admin/console/api/sales/${shadow}/cleanup-checklist`)
  ).json()) as any;
  expect(checklist.items.find((i: any) => i.id === 'shadow_rows_removed')).toMatchObject({ ok: true });

  expect(await count('seckill_order', real)).toBe(20);
  expect(await count('seckill_stock_log', real)).toBe(20);
  expect(await scalar(db, 'SELECT available FROM seckill_stock WHERE activity_id = ?', [real])).toBe(0);
  expect(realEvents.arrivals.length).toBe(20);
});

it('a real token on a shadow sale and a shadow token on a real sale: 403 shadow_mismatch at the edge and at the origin', async () => {
  const { activityId: real } = await stack.origin.sale({ stock: 5 });
  const shadow = await shadowSale(5);

  const realOnShadow = await buy(shadow, '8200001', false);
  expect(realOnShadow.status).toBe(403);
  expect(realOnShadow.body.error).toBe('shadow_mismatch');
  expect(realOnShadow.body.message).toMatch(/shadow sale/);
  const shadowOnReal = await buy(real, '8200002', true);
  expect(shadowOnReal.status).toBe(403);
  expect(shadowOnReal.body.error).toBe('shadow_mismatch');
  expect(shadowOnReal.body.message).toMatch(/real sale/);

  // The origin refuses on its own too (defence in depth), with the edge's signature on the request.
  const reserve = async (activityId: string, claims?: Record<string, string>) => {
    const body = JSON.stringify({
      activityId,
      userId: '8200003',
      quantity: 1,
      requestId: `r-${activityId}`,
      ...(claims ? { claims } : {}),
    });
    const signed = await signEdgeRequest(TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET, {
      method: 'POST',
      pathWithQuery: '/internal/reserve',
      body,
    });
    return fetch(`${stack.origin.url}/internal/reserve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signed },
      body,
    });
  };
  const atOrigin1 = await reserve(shadow);
  expect(atOrigin1.status).toBe(403);
  expect(((await atOrigin1.json()) as any).error).toBe('shadow_mismatch');
  const atOrigin2 = await reserve(real, { shadow: 'true' });
  expect(atOrigin2.status).toBe(403);
  expect(((await atOrigin2.json()) as any).error).toBe('shadow_mismatch');

  // Nothing was reserved by the refused calls.
  expect(await stack.origin.redis.hlen(`sk:{${real}:${await skuOf(real)}}:holders`)).toBe(0);
  expect(await stack.origin.redis.hlen(`sk:{${shadow}:${await skuOf(shadow)}}:holders`)).toBe(0);

  // The public body never says "shadow".
  const pub = (await (await fetch(`${stack.edge.url}/api/activities/${shadow}`)).json()) as any;
  expect(pub.activityId).toBe(shadow);
  expect(pub).not.toHaveProperty('shadow');
});

it('reads and polls of the wrong kind are refused too: a reservation, its lookup, a lottery entry and a place in line, 403 shadow_mismatch', async () => {
  const { activityId: real } = await stack.origin.sale({ stock: 5 });
  const shadow = await shadowSale(5);
  // The same user id on both sides: a real buyer who happens to share a rehearsal user's id.
  const userId = '8300001';
  const shadowBuy = await buy(shadow, userId, true);
  expect(shadowBuy.status).toBe(202);
  const realBuy = await buy(real, userId, false);
  expect(realBuy.status).toBe(202);
  const get = async (path: string, shadowToken: boolean) => {
    const res = await fetch(`${stack.edge.url}${path}`, {
      headers: { authorization: `Bearer ${await userToken(userId, shadowToken)}` },
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const refused = (answer: { status: number; body: any }) => {
    expect(answer.status).toBe(403);
    expect(answer.body.error).toBe('shadow_mismatch');
  };

  // Each read with the wrong kind of token is refused; with the right kind it answers. (A refusal
  // here comes before the user's poll allowance, one poll a second over all reservations: only
  // one poll of this user answers within the second.)
  refused(await get(`/api/reservations/${shadowBuy.body.reservationId}`, false));
  refused(await get(`/api/reservations/${realBuy.body.reservationId}`, true));
  expect((await get(`/api/reservations/${shadowBuy.body.reservationId}`, true)).status).toBe(200);
  refused(await get(`/api/activities/${shadow}/reservation`, false));
  refused(await get(`/api/activities/${real}/reservation`, true));
  expect((await get(`/api/activities/${shadow}/reservation`, true)).status).toBe(200);
  expect((await get(`/api/activities/${real}/reservation`, false)).status).toBe(200);
  refused(await get(`/api/activities/${shadow}/entries/${entryIdOf(shadow, userId)}`, false));
  refused(await get(`/api/activities/${real}/entries/${entryIdOf(real, userId)}`, true));

  // A place in a shadow sale's waiting room: refused before the line is asked (the entry need not exist).
  const queued = await shadowSale(5, { overflow: 'queue' });
  refused(await get(`/api/activities/${queued}/waiting/a-1`, false));
  expect((await get(`/api/activities/${queued}/waiting/a-1`, true)).status).not.toBe(403);
});

async function skuOf(activityId: string): Promise<string> {
  const [rows] = (await stack.origin.db.pool.query('SELECT sku_id FROM seckill_activity WHERE id = ?', [
    activityId,
  ])) as any;
  return String(rows[0].sku_id);
}

it('shadow is fixed at creation: PATCH with shadow on a real sale or off a shadow sale is 400 and changes nothing', async () => {
  const { activityId: real } = await stack.origin.sale({ stock: 5 });
  const shadow = await shadowSale(5);
  const version = (id: string) =>
    scalar(stack.origin.db.pool, 'SELECT version FROM seckill_activity WHERE id = ?', [id]);
  const before = [await version(real), await version(shadow)];

  for (const [id, body] of [
    [real, { shadow: true }],
    [shadow, { shadow: false }],
    [real, { shadow: true, userRatePerSec: 5 }],
  ] as const) {
    const res = await stack.origin.admin('PATCH', `/admin/activities/${id}`, body);
    expect(res.status).toBe(400);
    const err = (await res.json()) as any;
    expect(err.error).toBe('bad_request');
    expect(err.message).toMatch(/shadow is fixed at creation/);
  }
  expect([await version(real), await version(shadow)]).toEqual(before);
  expect(await scalar(stack.origin.db.pool, 'SELECT shadow FROM seckill_activity WHERE id = ?', [real])).toBe(0);
  expect(
    await scalar(stack.origin.db.pool, 'SELECT user_rate_per_sec FROM seckill_activity WHERE id = ?', [real]),
  ).toBe(1);

  // A bad shadow value at creation is refused too.
  const bad = await stack.origin.admin('POST', '/admin/activities', {
    activityId: uniqueId(),
    skuId: uniqueId(),
    title: 'bad',
    stock: 1,
    startsAt: new Date(Date.now() - 1000).toISOString(),
    endsAt: new Date(Date.now() + 60_000).toISOString(),
    shadow: 'yes',
  });
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as any).message).toMatch(/shadow must be true or false/);

  // Creating a shadow sale under a real sale's id is refused and leaves the real sale as it was.
  const title = await scalar(stack.origin.db.pool, 'SELECT title FROM seckill_activity WHERE id = ?', [real]);
  const again = await stack.origin.admin('POST', '/admin/activities', {
    activityId: real,
    skuId: uniqueId(),
    title: 'a shadow over a real sale',
    stock: 1,
    startsAt: new Date(Date.now() - 1000).toISOString(),
    endsAt: new Date(Date.now() + 60_000).toISOString(),
    shadow: true,
  });
  expect(again.status).toBe(409);
  const conflict = (await again.json()) as any;
  expect(conflict.error).toBe('conflict');
  expect(conflict.message).toMatch(/already exists: a shadow sale needs an id of its own/);
  expect(await scalar(stack.origin.db.pool, 'SELECT shadow FROM seckill_activity WHERE id = ?', [real])).toBe(0);
  expect(await scalar(stack.origin.db.pool, 'SELECT title FROM seckill_activity WHERE id = ?', [real])).toBe(title);
  expect(await version(real)).toBe(before[0]);
});

it('a shadow lottery sale: its cleanup removes the draw record (the seed included) with the rest', async () => {
  const activityId = await shadowSale(3, {
    admission: 'lottery',
    lotteryWindowMs: 60_000,
    startsAt: new Date(Date.now() + 600_000).toISOString(),
  });
  const draws = () => count('seckill_draw', activityId);
  expect(await draws()).toBe(1);
  expect((await stack.origin.admin('PATCH', `/admin/activities/${activityId}`, { state: 'stopped' })).status).toBe(200);
  const cleaned = await stack.origin.admin('POST', `/admin/activities/${activityId}/cleanup`);
  expect(cleaned.status).toBe(200);
  const removed = ((await cleaned.json()) as any).removed;
  expect(removed).toMatchObject({ seckill_draw: 1, seckill_draw_entrant: 0 });
  expect(await draws()).toBe(0);
  const checklist = (await (
    await stack.origin.admin('GET', `/admin/console/api/sales/${activityId}/cleanup-checklist`)
  ).json()) as any;
  expect(checklist.items.find((i: any) => i.id === 'shadow_rows_removed')).toMatchObject({ ok: true });
});
