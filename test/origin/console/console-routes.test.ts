/**
 * The operator console's routes on a real origin (MariaDB, Redis): the static shell without the
 * token and under its CSP, every data route refusing without the token, the create form's check by
 * the API's own schema, who the token's operator is (the name every change records), and the sales
 * list, live view and cleanup checklist against real state.
 * The browser side is test/e2e/console.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { count, pay, reserveAll, users } from '../../helpers/lifecycle.js';
import { uniqueId } from '../../helpers/ids.js';
import { startTestOrigin, TEST_SECRETS, waitFor, type TestOrigin } from '../../helpers/origin.js';

/** An operator of ADMIN_TOKENS (32 characters: the floor off loopback). */
const ALICE = { name: 'alice.ops', token: 'alice-ops-token-0123456789abcdef' };

let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin({ ADMIN_TOKENS: `${ALICE.name}:${ALICE.token}` });
});
afterAll(async () => {
  await t?.stop();
});

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any });
const get = (path: string, token?: string) =>
  fetch(t.url + path, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
const orderNoOf = async (activityId: string) => {
  const [found] = (await t.db.pool.query(
    'SELECT order_no FROM seckill_order WHERE activity_id = ? ORDER BY id LIMIT 1',
    [activityId],
  )) as any;
  return String(found[0].order_no);
};
const iso = (msFromNow: number) => new Date(Date.now() + msFromNow).toISOString();

describe('the static shell', () => {
  it('loads without the token, with a strict CSP, no inline script, and only its own files', async () => {
    const res = await get('/admin/console/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await res.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/src="\/admin\/console\/[a-z-]+\.js"/);
      expect(body!.trim()).toBe('');
    }
    expect(html).not.toMatch(/\son[a-z]+=/i); // no inline event handlers
    expect(html).not.toMatch(/style="/); // no inline styles (style-src 'self')

    const js = await get('/admin/console/console.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('content-security-policy')).toBe(csp);
    expect((await get('/admin/console/console.css')).headers.get('content-type')).toBe('text/css; charset=utf-8');
    // Only the console's own files: an unknown name or an escaped path is 404, never a file of the project.
    for (const path of [
      '/admin/console/nothing.js',
      '/admin/console/..%2Fconfig.ts',
      '/admin/console/..%2F..%2Fpackage.json',
    ])
      expect(await json(await get(path))).toMatchObject({ status: 404, body: { error: 'not_found' } });
    // Without the trailing slash: sent to the shell.
    const bare = await fetch(`${t.url}/admin/console`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/admin/console/']);
  });
});

describe('data needs the admin token', () => {
  it('every console data route answers 401 unauthenticated without it or with a wrong one, and serves no data', async () => {
    const { activityId } = await t.sale({ stock: 2 });
    const paths = [
      '/admin/console/api/whoami',
      '/admin/console/api/sales',
      `/admin/console/api/sales/${activityId}/live`,
      `/admin/console/api/sales/${activityId}/report`,
      `/admin/console/api/sales/${activityId}/cleanup-checklist`,
    ];
    for (const path of paths) {
      for (const token of [undefined, 'wrong-token-0123']) {
        const { status, body } = await json(await get(path, token));
        expect(status).toBe(401);
        expect(Object.keys(body).sort()).toEqual(['error', 'message', 'traceId']);
        expect(body.error).toBe('unauthenticated');
      }
    }
    const check = await fetch(`${t.url}/admin/console/api/activities/check`, { method: 'POST', body: '{}' });
    expect((await json(check)).status).toBe(401);
  });

  it('a bad activity id is 400 bad_request; an unknown one 404 not_found', async () => {
    for (const suffix of ['live', 'report', 'cleanup-checklist']) {
      const bad = await json(await get(`/admin/console/api/sales/12ab/${suffix}`, TEST_SECRETS.ADMIN_TOKEN));
      expect(bad).toMatchObject({ status: 400, body: { error: 'bad_request' } });
      expect(bad.body.message).toMatch(/activity id must be a decimal positive 64-bit integer/);
      const unknown = await json(
        await get(`/admin/console/api/sales/${uniqueId()}/${suffix}`, TEST_SECRETS.ADMIN_TOKEN),
      );
      expect(unknown).toMatchObject({ status: 404, body: { error: 'not_found' } });
    }
  });
});

describe('who the console is signed in as', () => {
  it("whoami names the token's operator: an ADMIN_TOKENS operator by name, the shared ADMIN_TOKEN as admin", async () => {
    const asAlice = await get('/admin/console/api/whoami', ALICE.token);
    expect(await json(asAlice)).toEqual({ status: 200, body: { operator: ALICE.name } });
    expect(asAlice.headers.get('cache-control')).toBe('no-store');
    expect(await json(await get('/admin/console/api/whoami', TEST_SECRETS.ADMIN_TOKEN))).toEqual({
      status: 200,
      body: { operator: 'admin' },
    });
    // A claimed name changes nothing: the answer is the token's.
    const claimed = await fetch(`${t.url}/admin/console/api/whoami`, {
      headers: { authorization: `Bearer ${ALICE.token}`, 'x-admin-actor': 'ceo@corp' },
    });
    expect(await json(claimed)).toEqual({ status: 200, body: { operator: ALICE.name } });
  });

  it('whoami without a token, or with a wrong or altered one, is 401 unauthenticated and names nobody', async () => {
    for (const token of [undefined, '', 'wrong-token-0123', `${ALICE.token}x`, ALICE.token.slice(0, -1), ALICE.name]) {
      const { status, body } = await json(await get('/admin/console/api/whoami', token));
      expect([token, status, body.error]).toEqual([token, 401, 'unauthenticated']);
      expect(body.operator).toBeUndefined();
    }
  });
});

describe('the create form check', () => {
  const check = (body: unknown) =>
    t.admin('POST', '/admin/console/api/activities/check', typeof body === 'string' ? body : JSON.stringify(body));

  it('a body that is not JSON is 400 bad_request', async () => {
    expect(await json(await check('{nope'))).toMatchObject({
      status: 400,
      body: { error: 'bad_request', message: 'body must be JSON' },
    });
  });

  it('names every field the API refuses, with the API’s own messages, and creates nothing', async () => {
    const activityId = uniqueId();
    const input = {
      activityId,
      skuId: 12,
      title: '',
      stock: 0,
      startsAt: '2026-12-01T10:00:00',
      endsAt: iso(3_600_000),
    };
    const { status, body } = await json(await check(input));
    expect(status).toBe(400);
    expect(body.error).toBe('bad_request');
    const byField = Object.fromEntries(body.issues.map((i: any) => [i.field, i.message]));
    expect(Object.keys(byField).sort()).toEqual(['skuId', 'startsAt', 'stock', 'title']);
    expect(byField.stock).toBe('stock must be at least 1: a sale with nothing to sell is refused');
    expect(byField.skuId).toBe('skuId must be a string of digits');
    // The API itself refuses the same body with the first of those messages.
    const api = await json(await t.admin('POST', '/admin/activities', input));
    expect(api.status).toBe(400);
    expect(api.body.message).toBe(body.message);
    expect(await count(t, 'SELECT COUNT(*) FROM seckill_activity WHERE id = ?', [activityId])).toBe(0);
  });

  it('a cross-field rule is named on its field; a valid body passes and is not created by the check', async () => {
    const activityId = uniqueId();
    const base = { activityId, skuId: uniqueId(), title: 'x', stock: 5, startsAt: iso(60_000), endsAt: iso(3_600_000) };
    const over = await json(await check({ ...base, initialRelease: 6 }));
    expect(over.body.issues).toEqual([{ field: 'initialRelease', message: 'initialRelease must not exceed stock' }]);
    expect(await json(await check(base))).toEqual({ status: 200, body: { ok: true } });
    expect(await count(t, 'SELECT COUNT(*) FROM seckill_activity WHERE id = ?', [activityId])).toBe(0);
  });
});

describe('what the console reads', () => {
  it('sales list: state, public state, stock left and held back, orders, paid, timed out — exact', async () => {
    const { activityId } = await t.sale({ stock: 5 });
    await reserveAll(t, activityId, users(7_100_001, 3));
    await waitFor(
      () => count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
      (n) => n === 3,
    );
    const orderNo = await orderNoOf(activityId);
    expect((await pay(t, orderNo)).status).toBe(200);
    const { status, body } = await json(await t.admin('GET', '/admin/console/api/sales'));
    expect(status).toBe(200);
    const row = body.sales.find((s: any) => s.activityId === activityId);
    expect(row).toMatchObject({
      state: 'open',
      publicState: 'open',
      stock: 5,
      left: 2,
      heldBack: 0,
      orders: 3,
      paid: 1,
      timedOut: 0,
    });
  });

  it('live view: buckets, Stream backlog, failover, funnel totals that move with reservations; unregistered metrics are null', async () => {
    const { activityId } = await t.sale({ stock: 6, stockBuckets: 2 });
    const live = async () => (await json(await t.admin('GET', `/admin/console/api/sales/${activityId}/live`))).body;
    const before = await live();
    expect(before.buckets.map((b: any) => b.units)).toEqual([3, 3]);
    expect(before.failover).toEqual({ closed: false, since: null });
    expect(before.edge).toEqual({ kind: 'none', originVersion: before.config.version });
    expect(before.signals.stream).toEqual({ pending: 0, lag: 0 });
    expect(before.waitingLine).toBe(0); // overflow: reject — nobody waits
    // Present metrics are numbers, absent ones null ("n/a" on screen): whichever this build exports.
    const registered = (name: string) => t.origin.parts.metrics.registry.getSingleMetric(name) !== undefined;
    expect(before.funnel.clicks === null).toBe(!registered('seckill_edge_clicks_total'));
    expect(before.signals.redis.slowlogEntries === null).toBe(!registered('seckill_redis_slowlog_entries_total'));
    expect(typeof before.signals.runtime.gcCount).toBe('number'); // prom-client's default GC histogram

    await reserveAll(t, activityId, users(7_200_001, 2));
    const after = await live();
    expect(after.funnel.reserved - before.funnel.reserved).toBe(2);
    expect(after.buckets.reduce((s: number, b: any) => s + b.units, 0)).toBe(4);
    expect(after.units).toEqual({ left: 4, onSale: 6 });
  });

  it("a shadow sale's banners read its own ledger: a parked shadow event shows on it, not on a real sale", async () => {
    const { activityId: real } = await t.sale({ stock: 2 });
    const shadow = uniqueId();
    const created = await t.admin('POST', '/admin/activities', {
      activityId: shadow,
      skuId: uniqueId(),
      title: `shadow ${shadow}`,
      stock: 2,
      startsAt: iso(-1000),
      endsAt: iso(3_600_000),
      shadow: true,
    });
    expect(created.status).toBe(201);
    expect((await t.admin('POST', `/admin/activities/${shadow}/warmup`)).status).toBe(200);
    // A parked event row in the shadow outbox under each sale's id (stood in: no event can park here).
    for (const id of [real, shadow])
      await t.db.pool.query(
        `INSERT INTO shadow_order_event_outbox (event_id, type, order_no, activity_id, user_id, quantity, status, attempts, last_error)
         VALUES (?, 'order.paid', ?, ?, 9500001, 1, 2, 10, 'connect ECONNREFUSED')`,
        [`S${id}:order.paid`, `S${id}`, id],
      );
    const banners = async (id: string) =>
      (await json(await t.admin('GET', `/admin/console/api/sales/${id}/live`))).body.alerts.map((a: any) => a.id);
    expect(await banners(shadow)).toContain('parked');
    expect(await banners(real)).not.toContain('parked');
  });

  it('live view of a sale the failover gate closed: closed, and since when', async () => {
    // Not warmed, so the failover watch (which recovers the warmed sales it finds closed) leaves it alone.
    const activityId = uniqueId();
    const created = await t.admin('POST', '/admin/activities', {
      activityId,
      skuId: uniqueId(),
      title: 'closed by failover',
      stock: 1,
      startsAt: iso(3_600_000),
      endsAt: iso(7_200_000),
    });
    expect(created.status).toBe(201);
    const live = async () => (await json(await t.admin('GET', `/admin/console/api/sales/${activityId}/live`))).body;
    expect((await live()).failover).toEqual({ closed: false, since: null });
    t.origin.parts.failover.close(activityId);
    try {
      const closed = await live();
      expect(closed.failover.closed).toBe(true);
      expect(Math.abs(Date.parse(closed.failover.since) - Date.now())).toBeLessThan(5_000);
      expect(closed.buckets).toEqual([{ bucket: 0, key: expect.stringContaining(`{${activityId}:`), units: null }]);
    } finally {
      t.origin.parts.failover.open(activityId);
    }
  });

  it('cleanup checklist: nothing ticked on a live sale; after stop, payment and cleanup every item the origin can verify is', async () => {
    const { activityId } = await t.sale({ stock: 2 });
    await reserveAll(t, activityId, users(7_300_001, 1));
    await waitFor(
      () => count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
      (n) => n === 1,
    );
    const checklist = async () =>
      (await json(await t.admin('GET', `/admin/console/api/sales/${activityId}/cleanup-checklist`))).body;
    const live = await checklist();
    const ticks = (c: any) => Object.fromEntries(c.items.map((i: any) => [i.id, i.ok]));
    expect(ticks(live)).toEqual({
      ended: false,
      settled: false, // one order awaits payment
      reconciled: true,
      warmup_removed: false,
      redis_keys_expire: false,
      rate_rules_removed: false,
    });
    expect(live.done).toBe(false);

    expect((await t.admin('PATCH', `/admin/activities/${activityId}`, { state: 'stopped' })).status).toBe(200);
    const orderNo = await orderNoOf(activityId);
    expect((await pay(t, orderNo)).status).toBe(200);
    const stopped = ticks(await checklist());
    expect(stopped).toMatchObject({ ended: true, settled: true, reconciled: true, warmup_removed: false });

    expect((await t.admin('POST', `/admin/activities/${activityId}/cleanup`)).status).toBe(200);
    const done = await checklist();
    expect(ticks(done)).toEqual({
      ended: true,
      settled: true,
      reconciled: true,
      warmup_removed: true,
      redis_keys_expire: true,
      rate_rules_removed: false, // this origin has no edge to ask (test/e2e/console.test.ts has one)
    });
    expect(done.items.find((i: any) => i.id === 'rate_rules_removed').detail).toBe('no EDGE_URL: cannot ask the edge');
    expect(done.items.find((i: any) => i.id === 'redis_keys_expire').detail).toMatch(
      /^\d+ keys, all gone within 86400 s$/,
    );
  });
});
