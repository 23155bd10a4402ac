/**
 * The deny list and eligibility decided at the origin: every path to a unit obeys the
 * rules in force when the unit is decided, whatever the edge's copy says. The edge is left out on
 * purpose: each call goes straight to the origin's signed `/internal/reserve`, as an edge with a
 * stale copy (or a waiting-room turn, which passes no edge gate) would send it.
 * - a purchase straight after `PUT /admin/deny` answered, on this origin process and on another;
 * - a purchase after a PATCH of eligibility, against the claims the edge forwarded;
 * - a sale warmed after the deny (the list is loaded before the sale becomes warm);
 * - a lottery entry;
 * - a dead letter's retry for a user denied since it was dead-lettered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activityKeys } from '../../../origin/redis/keys.js';
import { uniqueId } from '../../helpers/ids.js';
import { count } from '../../helpers/lifecycle.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

const PARKED = {
  FAILOVER_POLL_MS: '3600000',
  RECONCILE_INTERVAL_MS: '3600000',
  TIMEOUT_SCAN_MS: '3600000',
  OUTBOX_POLL_MS: '3600000',
};
let t: TestOrigin;
let other: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin({ ...PARKED, ORIGIN_ROLE: 'http' });
  // A second origin process on the same database and Redis: a change answered by one binds the other.
  other = await startTestOrigin({ ...PARKED, ORIGIN_ROLE: 'http' }, t.db);
});
/** Sales made here without t.sale(): their keys are dropped at the end as t.sale()'s are. */
const made: { activityId: string; skuId: string }[] = [];
afterAll(async () => {
  for (const a of made) {
    const keys = await t.redis.keys(`sk:{${a.activityId}:${a.skuId}}:*`);
    if (keys.length) await t.redis.del(...keys);
    await t.redis.hdel('sk:activities', a.activityId);
  }
  await other?.stop();
  await t?.stop();
});

const GOLD = { claim: 'tier', values: ['gold'] };

async function reserve(o: TestOrigin, activityId: string, userId: string, claims?: Record<string, unknown>) {
  const res = await o.internal('POST', '/internal/reserve', {
    activityId,
    userId,
    quantity: 1,
    requestId: `r-${userId}-${uniqueId()}`,
    ...(claims ? { claims } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const outcome = (r: { status: number; body: any }) => [r.status, r.body.error ?? r.body.status];

async function saleWith(extra: Record<string, unknown>, stock = 10) {
  const activityId = uniqueId();
  const skuId = uniqueId();
  made.push({ activityId, skuId });
  const now = Date.now();
  const created = await t.admin('POST', '/admin/activities', {
    activityId,
    skuId,
    title: `rules ${activityId}`,
    stock,
    startsAt: new Date(now).toISOString(),
    endsAt: new Date(now + 3_600_000).toISOString(),
    ...extra,
  });
  expect(created.status, await created.clone().text()).toBe(201);
  expect((await t.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(200);
  return { activityId, skuId };
}

const stockOf = async (activityId: string, skuId: string) =>
  Number(await t.redis.get(activityKeys(activityId, skuId).stock));

describe('deny list at the origin', () => {
  it('a purchase straight after PUT /admin/deny answered is refused 403 denied, on either origin process; lifted again', async () => {
    const { activityId, skuId } = await t.sale({ stock: 10 });
    const userId = uniqueId();
    const denied = await t.admin('PUT', `/admin/deny/${userId}`);
    expect(denied.status).toBe(200);
    // No EDGE_URL here: the edge was never told, so only the origin can refuse.
    expect(await denied.json()).toEqual({ userId, denied: true, atEdge: false });
    expect(outcome(await reserve(t, activityId, userId))).toEqual([403, 'denied']);
    expect(outcome(await reserve(other, activityId, userId))).toEqual([403, 'denied']);
    // Others are untouched; nothing moved for the denied user.
    expect(outcome(await reserve(other, activityId, uniqueId()))).toEqual([202, 'queued']);
    expect(await stockOf(activityId, skuId)).toBe(9);

    expect((await t.admin('DELETE', `/admin/deny/${userId}`)).status).toBe(200);
    expect(outcome(await reserve(other, activityId, userId))).toEqual([202, 'queued']);
    expect(await stockOf(activityId, skuId)).toBe(8);
  });

  it('a reservation decided before the deny stands: the repeat answers it, no second unit', async () => {
    const { activityId } = await t.sale({ stock: 10 });
    const userId = uniqueId();
    const first = await reserve(t, activityId, userId);
    expect(first.status).toBe(202);
    await t.admin('PUT', `/admin/deny/${userId}`);
    const again = await reserve(t, activityId, userId);
    expect([again.status, again.body.reservationId]).toEqual([200, first.body.reservationId]);
  });

  it('a sale warmed after the deny refuses the user from its first reservation on', async () => {
    const userId = uniqueId();
    await t.admin('PUT', `/admin/deny/${userId}`);
    const { activityId } = await t.sale({ stock: 10 });
    expect(outcome(await reserve(other, activityId, userId))).toEqual([403, 'denied']);
  });

  it('with stock buckets every bucket holds the list: users of any home bucket are refused', async () => {
    const { activityId } = await t.sale({ stock: 40, stockBuckets: 4 });
    const deniedUsers = Array.from({ length: 8 }, () => uniqueId());
    for (const u of deniedUsers) await t.admin('PUT', `/admin/deny/${u}`);
    for (const u of deniedUsers) expect(outcome(await reserve(other, activityId, u))).toEqual([403, 'denied']);
  });
});

describe('eligibility at the origin', () => {
  it('checks the forwarded claims; a PATCH binds the next reservation on every origin process', async () => {
    const { activityId, skuId } = await saleWith({ eligibility: GOLD });
    expect(outcome(await reserve(t, activityId, uniqueId(), { tier: 'gold' }))).toEqual([202, 'queued']);
    expect(outcome(await reserve(t, activityId, uniqueId(), { tier: 'silver' }))).toEqual([403, 'not_eligible']);
    expect(outcome(await reserve(t, activityId, uniqueId()))).toEqual([403, 'not_eligible']);
    expect(outcome(await reserve(t, activityId, uniqueId(), { tier: ['silver', 'gold'] }))).toEqual([202, 'queued']);

    const patched = await t.admin('PATCH', `/admin/activities/${activityId}`, {
      eligibility: { claim: 'tier', values: ['platinum'] },
    });
    expect(patched.status).toBe(200);
    expect(outcome(await reserve(other, activityId, uniqueId(), { tier: 'gold' }))).toEqual([403, 'not_eligible']);
    expect(outcome(await reserve(t, activityId, uniqueId(), { tier: 'platinum' }))).toEqual([202, 'queued']);

    // Lifted: everyone again, claims or not.
    await t.admin('PATCH', `/admin/activities/${activityId}`, { eligibility: null });
    expect(outcome(await reserve(other, activityId, uniqueId()))).toEqual([202, 'queued']);
    expect(await stockOf(activityId, skuId)).toBe(6);
  });
});

describe('lottery entries', () => {
  it('a denied or ineligible user enters no draw; an entry made before the change stays for the draw', async () => {
    const { activityId } = await saleWith({ admission: 'lottery', lotteryWindowMs: 60_000, eligibility: GOLD });
    const early = uniqueId();
    expect(outcome(await reserve(t, activityId, early, { tier: 'gold' }))).toEqual([202, 'entered']);
    const denied = uniqueId();
    await t.admin('PUT', `/admin/deny/${denied}`);
    await t.admin('PUT', `/admin/deny/${early}`);
    expect(outcome(await reserve(other, activityId, denied, { tier: 'gold' }))).toEqual([403, 'denied']);
    expect(outcome(await reserve(other, activityId, uniqueId(), { tier: 'silver' }))).toEqual([403, 'not_eligible']);
    // The earlier entry is the user's one entry (a repeat): whether it may win is the draw's decision.
    expect(outcome(await reserve(other, activityId, early, { tier: 'gold' }))).toEqual([200, 'entered']);
  });
});

describe('dead-letter retry', () => {
  it('a user denied after the dead letter was written is not requeued: 409, the units stay on sale; allowed again, it retries', async () => {
    const { activityId, skuId } = await t.sale({ stock: 3 });
    const keys = activityKeys(activityId, skuId);
    const userId = uniqueId();
    // Orders cannot be written (a column without a default): the reservation becomes a dead letter.
    await t.db.pool.query('ALTER TABLE seckill_order ADD COLUMN blocks_settlement INT NOT NULL');
    let reservationId: string;
    const consumers = await startTestOrigin(
      { ...PARKED, ORIGIN_ROLE: 'consumers', SETTLE_MAX_DELIVERIES: '1', SETTLE_CLAIM_IDLE_MS: '100' },
      t.db,
    );
    try {
      const r = await reserve(t, activityId, userId);
      expect(r.status).toBe(202);
      reservationId = r.body.reservationId;
      await waitFor(
        () =>
          count(t, 'SELECT COUNT(*) FROM seckill_dead_letter WHERE reservation_id = ? AND restocked = 1', [
            reservationId,
          ]),
        (n) => n === 1,
        30_000,
      );
    } finally {
      await t.db.pool.query('ALTER TABLE seckill_order DROP COLUMN blocks_settlement');
    }
    try {
      expect(await t.redis.get(keys.stock)).toBe('3');
      await t.admin('PUT', `/admin/deny/${userId}`);
      const retry = await t.admin('POST', `/admin/dead-letters/${reservationId}/retry`);
      const body = (await retry.json()) as any;
      expect([retry.status, body.error]).toEqual([409, 'conflict']);
      expect(body.message).toMatch(/deny list/);
      // Nothing requeued: the units stay on sale, the row stays open, no order appears.
      expect(await t.redis.get(keys.stock)).toBe('3');
      expect(await t.redis.hexists(keys.holders, userId)).toBe(0);
      const [[row]] = (await t.db.pool.query('SELECT status FROM seckill_dead_letter WHERE reservation_id = ?', [
        reservationId,
      ])) as any;
      expect(row.status).toBe('open');

      await t.admin('DELETE', `/admin/deny/${userId}`);
      const again = await t.admin('POST', `/admin/dead-letters/${reservationId}/retry`);
      expect(await again.json()).toEqual({ reservationId, status: 'retried', requeued: true });
      await waitFor(
        () => count(t, 'SELECT COUNT(*) FROM seckill_order WHERE reservation_id = ?', [reservationId]),
        (n) => n === 1,
        30_000,
      );
      expect(await t.redis.get(keys.stock)).toBe('2');
    } finally {
      await consumers.stop();
    }
  });
});
