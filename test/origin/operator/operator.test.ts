/**
 * What a new operator tripped on, one test per behaviour: create refusals and their
 * hints, admin token messages, `state` vs `publicState`, a repeat purchase after settlement, the
 * live-orders reconciliation figures, warm-up after cleanup, the payment timestamp unit, and the
 * report CLI naming the database it read.
 */
import { spawnSync } from 'node:child_process';
import mysql from 'mysql2/promise';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { count, pay, paymentHeaders, reconciliation } from '../../helpers/lifecycle.js';
import { startTestOrigin, TEST_SECRETS, waitFor, type TestOrigin } from '../../helpers/origin.js';
import { uniqueId } from '../../helpers/ids.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin({ TIMEOUT_SCAN_MS: '50', OUTBOX_POLL_MS: '50' });
});
afterAll(async () => {
  await t?.stop();
});

const iso = (msFromNow: number) => new Date(Date.now() + msFromNow).toISOString();
const activity = (over: Record<string, unknown> = {}) => ({
  activityId: uniqueId(),
  skuId: uniqueId(),
  title: 'operator test',
  stock: 3,
  startsAt: iso(3_600_000), // far enough ahead to be upcoming however slow the machine
  endsAt: iso(7_200_000),
  ...over,
});
const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any });

describe('POST /admin/activities refuses what can only be a mistake, and says why', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    [
      'a window that has already ended',
      { startsAt: iso(-7_200_000), endsAt: iso(-3_600_000) },
      /endsAt is in the past/,
    ],
    ['zero stock', { stock: 0 }, /stock must be at least 1/],
    ['a numeric activityId', { activityId: 1001 }, /^activityId: activityId must be a string of digits$/],
    [
      'a date without a zone',
      { startsAt: '2026-12-01T10:00:00' },
      /ISO-8601 date-time with a zone, e.g. 2026-12-01T10:00:00Z/,
    ],
  ];
  for (const [name, over, message] of cases) {
    it(`400 for ${name}; nothing written`, async () => {
      const before = await count(t, 'SELECT COUNT(*) FROM seckill_activity');
      const res = await json(await t.admin('POST', '/admin/activities', activity(over)));
      expect([res.status, res.body.error]).toEqual([400, 'bad_request']);
      expect(res.body.message).toMatch(message);
      expect(await count(t, 'SELECT COUNT(*) FROM seckill_activity')).toBe(before);
    });
  }

  it('a missing activityId is still "required"', async () => {
    const { activityId: _, ...rest } = activity();
    const res = await json(await t.admin('POST', '/admin/activities', rest));
    expect(res.body.message).toBe('activityId: activityId is required');
  });
});

it('a missing and a wrong admin token get different messages, neither revealing the token', async () => {
  const missing = await json(await t.admin('GET', '/admin/activities/1', undefined, ''));
  const wrong = await json(await t.admin('GET', '/admin/activities/1', undefined, 'not-the-admin-token'));
  expect([missing.status, missing.body.error]).toEqual([401, 'unauthenticated']);
  expect([wrong.status, wrong.body.error]).toEqual([401, 'unauthenticated']);
  expect(missing.body.message).toBe('admin token required: send Authorization: Bearer <token>');
  expect(wrong.body.message).toBe('admin token is not valid');
  for (const m of [missing.body.message, wrong.body.message]) expect(m).not.toContain(TEST_SECRETS.ADMIN_TOKEN);
});

it('admin answers carry the switch as `state` and the public phase as `publicState`', async () => {
  const a = activity();
  const created = await json(await t.admin('POST', '/admin/activities', a));
  expect(created.status).toBe(201);
  expect([created.body.state, created.body.publicState]).toEqual(['open', 'upcoming']);
  const read = await json(await t.admin('GET', `/admin/activities/${a.activityId}`));
  expect([read.body.state, read.body.publicState]).toEqual(['open', 'upcoming']);
  const paused = await json(await t.admin('PATCH', `/admin/activities/${a.activityId}`, { state: 'paused' }));
  expect([paused.body.state, paused.body.publicState]).toEqual(['paused', 'upcoming']);
  const warmed = await json(await t.admin('POST', `/admin/activities/${a.activityId}/warmup`));
  expect(warmed.body).toEqual({
    activityId: a.activityId,
    stock: 3,
    holders: 0,
    state: 'paused',
    publicState: 'upcoming',
  });
  const stopped = await json(await t.admin('PATCH', `/admin/activities/${a.activityId}`, { state: 'stopped' }));
  expect([stopped.body.state, stopped.body.publicState]).toEqual(['stopped', 'ended']);
});

describe('one sale from purchase to cleanup', () => {
  let activityId: string;
  let reservationId: string;
  const reserve = () =>
    t.internal('POST', '/internal/reserve', { activityId, userId: '77', quantity: 1, requestId: 'first' }).then(json);

  beforeAll(async () => {
    ({ activityId } = await t.sale({ stock: 4 }));
  });

  it('a repeat purchase answers the reservation as it stands: ordered, then paid', async () => {
    const first = await reserve();
    expect([first.status, first.body.status]).toEqual([202, 'queued']);
    reservationId = first.body.reservationId;
    await waitFor(
      () => count(t, 'SELECT COUNT(*) FROM seckill_order WHERE reservation_id = ?', [reservationId]),
      (n) => n === 1,
    );
    const ordered = await reserve();
    expect(ordered.status).toBe(200);
    expect(ordered.body).toMatchObject({
      reservationId,
      status: 'ordered',
      orderNo: expect.stringMatching(/^[0-9A-F]{24}$/),
    });
    expect((await pay(t, ordered.body.orderNo)).status).toBe(200);
    expect((await reserve()).body).toMatchObject({ reservationId, status: 'paid', orderNo: ordered.body.orderNo });
  });

  it('a repeat whose status lookup is held up answers `queued` within REPEAT_STATUS_TIMEOUT_MS, never an error', async () => {
    // A write lock on the orders table blocks every other session's read of it: the lookup cannot finish.
    const locker = await mysql.createConnection({ uri: t.db.url });
    try {
      await locker.query('LOCK TABLES seckill_order WRITE');
      const held = await reserve();
      expect([held.status, held.body]).toEqual([200, { status: 'queued', reservationId }]);
    } finally {
      await locker.query('UNLOCK TABLES');
      await locker.end();
    }
    expect((await reserve()).body.status).toBe('paid');
  });

  it('db.live_orders_within_stock shows the two figures compared: stock and live units', async () => {
    const rec = await reconciliation(t, activityId);
    expect(rec.checks.find((c: any) => c.name === 'db.live_orders_within_stock')).toEqual({
      name: 'db.live_orders_within_stock',
      expected: 4,
      actual: 1,
      ok: true,
      rule: 'at_most',
    });
  });

  it('after cleanup, warm-up answers 409 and the sale stays out of the registry', async () => {
    expect((await t.admin('PATCH', `/admin/activities/${activityId}`, { state: 'stopped' })).status).toBe(200);
    const cleaned = await json(await t.admin('POST', `/admin/activities/${activityId}/cleanup`));
    expect(cleaned.status).toBe(200);
    expect(await t.redis.hexists('sk:activities', activityId)).toBe(0);
    const warm = await json(await t.admin('POST', `/admin/activities/${activityId}/warmup`));
    expect([warm.status, warm.body.error]).toEqual([409, 'conflict']);
    expect(warm.body.message).toMatch(/has ended/);
    expect(await t.redis.hexists('sk:activities', activityId)).toBe(0);
  });
});

it('a payment signed with a timestamp in seconds is refused with a message naming milliseconds', async () => {
  const body = JSON.stringify({ orderNo: 'A'.repeat(24), paymentId: 'p1', status: 'paid' });
  const seconds = String(Math.floor(Date.now() / 1000));
  const res = await json(
    await fetch(`${t.url}/payments/callback`, { method: 'POST', headers: paymentHeaders(body, seconds), body }),
  );
  expect([res.status, res.body.error]).toEqual([401, 'unauthenticated']);
  expect(res.body.message).toMatch(/x-payment-timestamp must be milliseconds since the epoch/);
});

it('npm run report names the database (and Redis) it read when the activity is not there', () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'origin/report-cli.ts', '--activity', '987654321'], {
    cwd: ROOT,
    env: { ...process.env, MYSQL_URL: t.db.url, REDIS_URL: t.config.REDIS_URL },
    encoding: 'utf8',
  });
  expect(run.status).toBe(1);
  expect(run.stderr).toContain('activity 987654321 does not exist');
  expect(run.stderr).toContain(`read database ${t.db.name} on `);
  expect(run.stderr).toContain('set MYSQL_URL / REDIS_URL');
});
