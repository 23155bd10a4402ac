/**
 * Sale operations at the origin (docs/design.md §10): tranches, scheduled and verified warm-up, live
 * switches logged with who and what, the deny list's admin API, and their bad input.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saleReport } from '../../../origin/operator/report.js';
import { pino } from 'pino';
import { scalar } from '../../helpers/db.js';
import { uniqueId } from '../../helpers/ids.js';
import { reserveAll } from '../../helpers/lifecycle.js';
import { reconcileDeps } from '../../helpers/reconcile.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

const lines: any[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
    done();
  },
});

const ANNA = 'ops-anna-token-0123456789';
const BO = 'ops-bo-token-0123456789ab';

let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin(
    // Scheduled warm-up 8 s ahead, verified 4 s ahead; a mismatch is confirmed by one re-read.
    {
      // Client, origin, Redis and MariaDB share a small busy box in tests.
      REDIS_COMMAND_TIMEOUT_MS: '1000',
      WARMUP_LEAD_SECONDS: '8',
      WARMUP_VERIFY_SECONDS: '4',
      WARMUP_SCAN_MS: '200',
      RECONCILE_CONFIRM_RUNS: '2',
      RECONCILE_CONFIRM_DELAY_MS: '200',
      // Operators with their own tokens: a change records the token's operator as its actor.
      ADMIN_TOKENS: `ops-anna:${ANNA},ops-bo:${BO}`,
    },
    undefined,
    { log: pino({ level: 'info' }, sink) },
  );
});
afterAll(async () => {
  await t.stop();
});

const users = (from: number, n: number) => Array.from({ length: n }, (_, i) => String(from + i));
const tally = (rs: { status: number; body: any }[]) =>
  rs.reduce<Record<string, number>>((acc, r) => {
    const key = `${r.status} ${r.body.error ?? r.body.status}`;
    acc[key] = (acc[key] ?? 0) + 1;
    return acc;
  }, {});

async function create(extra: Record<string, unknown>, startsInMs = -1000) {
  const activityId = uniqueId();
  const skuId = uniqueId();
  const now = Date.now();
  const res = await t.admin('POST', '/admin/activities', {
    activityId,
    skuId,
    title: `ops ${activityId}`,
    stock: 50,
    startsAt: new Date(now + startsInMs).toISOString(),
    endsAt: new Date(now + 3_600_000).toISOString(),
    ...extra,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return { activityId, skuId, keys: `sk:{${activityId}:${skuId}}` };
}

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any });

describe('tranches', () => {
  it('30 sold, release 20, 20 more sold; 409 beyond what is held back; reconciliation ok', async () => {
    const { activityId, keys } = await create({ initialRelease: 30 });
    await expect(json(await t.admin('POST', `/admin/activities/${activityId}/warmup`))).resolves.toMatchObject({
      status: 200,
      body: { stock: 30 },
    });
    // Held-back units are not in Redis until released.
    expect(await t.redis.get(`${keys}:stock`)).toBe('30');

    // More than is held back: 409, nothing changes.
    const tooMany = await json(await t.admin('POST', `/admin/activities/${activityId}/releases`, { units: 21 }));
    expect([tooMany.status, tooMany.body.error]).toEqual([409, 'conflict']);

    const first = await reserveAll(t, activityId, users(1000, 40));
    expect(tally(first)).toEqual({ '202 queued': 30, '409 sold_out': 10 });
    expect(await t.redis.get(`${keys}:stock`)).toBe('0');

    const release = await fetch(`${t.url}/admin/activities/${activityId}/releases`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ANNA}` },
      body: JSON.stringify({ units: 20 }),
    });
    expect(await json(release)).toEqual({ status: 200, body: { released: 20, heldBack: 0, applied: true } });
    expect(await t.redis.get(`${keys}:stock`)).toBe('20');
    expect(lines.find((l) => l.msg?.includes('tranche released') && l.activityId === activityId)).toMatchObject({
      actor: 'ops-anna',
      change: { release: 20, heldBack: 0 },
    });

    const second = await reserveAll(t, activityId, users(2000, 25));
    expect(tally(second)).toEqual({ '202 queued': 20, '409 sold_out': 5 });
    const beyond = await json(await t.admin('POST', `/admin/activities/${activityId}/releases`, { units: 1 }));
    expect([beyond.status, beyond.body.error]).toEqual([409, 'conflict']);

    await waitFor(
      () => scalar(t.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
      (n) => n === 50,
    );
    const rec = await json(await t.admin('GET', `/admin/activities/${activityId}/reconciliation`));
    expect(rec.body.checks.filter((c: any) => !c.ok)).toEqual([]);
    expect(rec.body.figures).toMatchObject({ initial: 50, heldBack: 0, pendingReleases: 0, available: 0 });
    const report = await saleReport(reconcileDeps(t), activityId);
    expect(report.tranches).toEqual({ heldBack: 0, pending: 0, applied: 20 });
  });

  it('with stock buckets: a release is split over the buckets and the sale reconciles', async () => {
    const { activityId } = await create({ stock: 40, initialRelease: 20, stockBuckets: 4 });
    expect((await t.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(200);
    expect(tally(await reserveAll(t, activityId, users(5000, 25)))).toEqual({ '202 queued': 20, '409 sold_out': 5 });
    const release = await json(await t.admin('POST', `/admin/activities/${activityId}/releases`, { units: 20 }));
    expect(release.body).toEqual({ released: 20, heldBack: 0, applied: true });
    expect(tally(await reserveAll(t, activityId, users(6000, 25)))).toEqual({ '202 queued': 20, '409 sold_out': 5 });
    await waitFor(
      () => scalar(t.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
      (n) => n === 40,
    );
    const rec = await json(await t.admin('GET', `/admin/activities/${activityId}/reconciliation`));
    expect(rec.body.checks.filter((c: any) => !c.ok)).toEqual([]);
  });

  it('reconciliation counts units still held back; a release before warm-up waits for it and is applied once', async () => {
    const { activityId, keys } = await create({ initialRelease: 10 }, 60_000); // starts in 60 s: not warmed by the job
    const early = await json(await t.admin('POST', `/admin/activities/${activityId}/releases`, { units: 15 }));
    expect(early.body).toEqual({ released: 15, heldBack: 25, applied: false });
    expect(await t.redis.exists(`${keys}:stock`)).toBe(0);
    await t.admin('POST', `/admin/activities/${activityId}/warmup`);
    expect(await t.redis.get(`${keys}:stock`)).toBe('10'); // available only: the pending release is not in it
    // ReleaseJob applies it after its lease (OUTBOX_CLAIM_LEASE_MS): units go to Redis and MySQL once.
    await t.origin.parts.db.query('UPDATE seckill_stock_release SET updated_at = NOW(3) - INTERVAL 1 HOUR');
    await t.origin.lifecycle!.releases.round();
    await t.origin.lifecycle!.releases.round();
    expect(await t.redis.get(`${keys}:stock`)).toBe('25');
    const rec = await json(await t.admin('GET', `/admin/activities/${activityId}/reconciliation`));
    expect(rec.body.checks.filter((c: any) => !c.ok)).toEqual([]);
    expect(rec.body.figures).toMatchObject({ initial: 50, available: 25, heldBack: 25, pendingReleases: 0 });
  });
});

describe('scheduled warm-up', () => {
  it('an activity created 12 s before its start (lead 8 s) opens warmed and verified, nobody calling warm-up', async () => {
    // A second origin on the same database runs the same job: each step is done exactly once.
    const second = await startTestOrigin(
      { REDIS_COMMAND_TIMEOUT_MS: '1000', WARMUP_LEAD_SECONDS: '8', WARMUP_VERIFY_SECONDS: '4', WARMUP_SCAN_MS: '200' },
      t.db,
      { log: pino({ level: 'info' }, sink) },
    );
    const { activityId, keys } = await create({}, 12_000);
    const startsAt = Date.now() + 12_000;
    expect(await t.redis.exists(`${keys}:stock`)).toBe(0);
    await waitFor(
      () => t.redis.exists(`${keys}:stock`),
      (n) => n === 1,
      30_000,
      100,
    );
    // Not before the lead: warmed at startsAt − 8 s at the earliest.
    expect(Date.now()).toBeGreaterThanOrEqual(startsAt - 8_000 - 1_000);
    await new Promise((r) => setTimeout(r, Math.max(0, startsAt - Date.now())));
    const status = await waitFor(
      async () =>
        (await t.origin.parts.db.query('SELECT warmup_status FROM seckill_activity WHERE id = ?', [activityId]))[0],
      (rows: any) => rows[0].warmup_status === 'verified',
    );
    expect((status as any)[0].warmup_status).toBe('verified');
    const check = await json(await t.admin('GET', `/admin/activities/${activityId}/warmup`));
    expect(check.status).toBe(200);
    expect(check.body.ok).toBe(true);
    expect(check.body.keys[`${keys}:stock`]).toBe(50);
    expect(check.body.checks.map((c: any) => c.name)).toContain('redis.stock_matches_mysql');
    const bought = await reserveAll(t, activityId, ['77']);
    expect(bought[0]!.status).toBe(202);
    await second.stop();
    const mine = (msg: string) => lines.filter((l) => l.msg === msg && l.activityId === activityId);
    expect(mine('scheduled warm-up done')).toHaveLength(1);
    expect(mine('warm-up verified')).toHaveLength(1);
  }, 60_000);

  it('a failed verification alarms, counts, and keeps the sale closed until an operator acts', async () => {
    const { activityId, keys } = await create({}, 7_000);
    await waitFor(
      () => t.redis.exists(`${keys}:stock`),
      (n) => n === 1,
      30_000,
      50,
    );
    await t.redis.set(`${keys}:stock`, '49'); // a unit lost behind the system's back
    await waitFor(
      async () => (await t.origin.parts.db.query('SELECT state FROM seckill_activity WHERE id = ?', [activityId]))[0],
      (rows: any) => rows[0].state === 'paused',
    );
    const alert = lines.find((l) => l.alert === 'warmup_mismatch' && l.activityId === activityId);
    expect(alert.failing).toEqual([{ name: 'redis.stock_matches_mysql', expected: 50, actual: 49, ok: false }]);
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(/^seckill_warmup_mismatches_total [1-9]/m);
    const check = await json(await t.admin('GET', `/admin/activities/${activityId}/warmup`));
    expect(check.body.ok).toBe(false);
    expect(check.body.figures.warmupStatus).toBe('mismatch');
    expect((await reserveAll(t, activityId, ['78']))[0]!.body.error).toBe('paused');

    // The operator's remedy (docs/operations.md): nothing sold yet, so reload the stock from MySQL, check, reopen.
    await t.redis.del(`${keys}:stock`);
    expect((await t.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(200);
    expect((await json(await t.admin('GET', `/admin/activities/${activityId}/warmup`))).body.ok).toBe(true);
    expect((await t.admin('PATCH', `/admin/activities/${activityId}`, { state: 'open' })).status).toBe(200);
    expect((await reserveAll(t, activityId, ['79']))[0]!.status).toBe(202);
  }, 60_000);
});

describe('live switches', () => {
  it('each change is logged with who and what, bumps the version, and counts', async () => {
    const { activityId } = await create({ stock: 10 });
    await t.admin('POST', `/admin/activities/${activityId}/warmup`);
    const before = await json(await t.admin('GET', `/admin/activities/${activityId}`));
    const res = await fetch(`${t.url}/admin/activities/${activityId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${BO}` },
      body: JSON.stringify({
        userRatePerSec: 5,
        admissionRatePerSec: 200,
        soldOutThreshold: 3,
        eligibility: { claim: 'tier', values: ['gold'] },
      }),
    });
    const after = await json(res);
    expect(after.status).toBe(200);
    expect(after.body.config).toMatchObject({
      userRatePerSec: 5,
      admissionRatePerSec: 200,
      soldOutThreshold: 3,
      eligibility: { claim: 'tier', values: ['gold'] },
      version: before.body.config.version + 1,
    });
    expect(after.body.units).toEqual({ left: 10, onSale: 10 });
    const logged = lines.find((l) => l.msg === 'activity changed' && l.activityId === activityId);
    expect(logged).toMatchObject({
      actor: 'ops-bo',
      changes: {
        userRatePerSec: { from: 1, to: 5 },
        admissionRatePerSec: { from: 5000, to: 200 },
        soldOutThreshold: { from: 0, to: 3 },
        eligibility: { from: null, to: { claim: 'tier', values: ['gold'] } },
      },
    });
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(/^seckill_admin_changes_total\{setting="soldOutThreshold"\} [1-9]/m);

    // The threshold at or above the units left makes the snapshot sold out; the origin still sells.
    const sold = await json(await t.admin('PATCH', `/admin/activities/${activityId}`, { soldOutThreshold: 10 }));
    expect(sold.body.soldOut).toBe(true);
    // (Members-only now: the origin checks the claims the edge forwards)
    const member = await t.internal('POST', '/internal/reserve', {
      activityId,
      userId: '5',
      quantity: 1,
      requestId: 'r-5',
      claims: { tier: 'gold' },
    });
    expect(member.status).toBe(202);
    expect((await reserveAll(t, activityId, ['6']))[0]!.status).toBe(403);
    const lifted = await json(
      await t.admin('PATCH', `/admin/activities/${activityId}`, { soldOutThreshold: 0, eligibility: null }),
    );
    expect([lifted.body.soldOut, lifted.body.config.eligibility]).toEqual([false, null]);
  });

  it('refuses bad input with 400 bad_request and changes nothing', async () => {
    const { activityId } = await create({ stock: 10 }, 60_000); // not due for warm-up: nothing moves on its own
    const cases: [string, string, unknown, Record<string, string>?][] = [
      ['PATCH', `/admin/activities/${activityId}`, {}],
      ['PATCH', `/admin/activities/${activityId}`, { soldOutThreshold: -1 }],
      ['PATCH', `/admin/activities/${activityId}`, { eligibility: { claim: 'tier' } }],
      ['PATCH', `/admin/activities/${activityId}`, { eligibility: { claim: 'a b', values: ['x'] } }],
      ['PATCH', `/admin/activities/${activityId}`, { userRatePerSec: 0 }],
      ['PATCH', `/admin/activities/${activityId}`, { stock: 5 }],
      ['PATCH', `/admin/activities/${activityId}`, { state: 'paused' }, { 'x-admin-actor': 'has space' }],
      ['POST', `/admin/activities/${activityId}/releases`, { units: 0 }],
      ['POST', `/admin/activities/${activityId}/releases`, { units: '5' }],
      ['POST', `/admin/activities/${activityId}/releases`, 'not json'],
      ['PUT', '/admin/deny/abc', undefined],
      ['DELETE', '/admin/deny/0', undefined],
      [
        'POST',
        '/admin/activities',
        {
          activityId: uniqueId(),
          skuId: '1',
          title: 't',
          stock: 5,
          initialRelease: 6,
          startsAt: new Date().toISOString(),
          endsAt: new Date(Date.now() + 1e6).toISOString(),
        },
      ],
    ];
    const before = await json(await t.admin('GET', `/admin/activities/${activityId}`));
    for (const [method, path, body, headers] of cases) {
      const res = await fetch(t.url + path, {
        method,
        headers: { authorization: `Bearer ${t.config.ADMIN_TOKEN}`, ...headers },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const answer = await json(res);
      expect([method, path, answer.status, answer.body.error]).toEqual([method, path, 400, 'bad_request']);
    }
    expect((await json(await t.admin('GET', `/admin/activities/${activityId}`))).body).toEqual(before.body);
  });

  it('a stopped sale refuses setting changes and releases with 409', async () => {
    const { activityId } = await create({ stock: 10, initialRelease: 5 });
    await t.admin('PATCH', `/admin/activities/${activityId}`, { state: 'stopped' });
    const patch = await json(await t.admin('PATCH', `/admin/activities/${activityId}`, { userRatePerSec: 3 }));
    expect([patch.status, patch.body.error]).toEqual([409, 'conflict']);
    const release = await json(await t.admin('POST', `/admin/activities/${activityId}/releases`, { units: 1 }));
    expect([release.status, release.body.error]).toEqual([409, 'conflict']);
  });
});

describe('deny list (admin side; the edge side is in test/e2e/sale-operations.test.ts)', () => {
  it('PUT and DELETE record the change with its actor; without an edge nothing is confirmed', async () => {
    const userId = uniqueId();
    const put = await json(await t.admin('PUT', `/admin/deny/${userId}`));
    expect(put).toEqual({ status: 200, body: { userId, denied: true, atEdge: false } });
    const [[row]] = (await t.db.pool.query(
      'SELECT denied, revision, pushed_revision FROM seckill_deny_list WHERE user_id = ?',
      [userId],
    )) as any;
    expect([Number(row.denied), Number(row.revision), Number(row.pushed_revision)]).toEqual([1, 1, 0]);
    const del = await json(await t.admin('DELETE', `/admin/deny/${userId}`));
    expect(del.body).toEqual({ userId, denied: false, atEdge: false });
    const [[after]] = (await t.db.pool.query('SELECT denied, revision FROM seckill_deny_list WHERE user_id = ?', [
      userId,
    ])) as any;
    expect([Number(after.denied), Number(after.revision)]).toEqual([0, 2]);
  });
});
