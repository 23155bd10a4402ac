/**
 * One recovery of a sale at a time across origin processes (recovery/recovery-lock.ts): two
 * origins sharing one Redis and one MySQL both see the same failover and both try to recover the
 * sale at once, each on its own MySQL pool. Exactly one rebuilds; the other waits for the lock, then
 * sees the proof and leaves the sale alone. The same for two operators' concurrent recover calls.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recoverAfterFailover } from '../../../origin/recovery/failover-recovery.js';
import { activityKeys } from '../../../origin/redis/keys.js';
import type { Sale } from '../../../origin/redis/redis-store.js';
import { counterValue } from '../../helpers/drill.js';
import { count, failingChecks, reconciliation, reserveAll, users } from '../../helpers/lifecycle.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';
import { failoverRecoveryDeps } from '../../helpers/recovery.js';

const PARKED = {
  ORIGIN_ROLE: 'http',
  FAILOVER_POLL_MS: '3600000',
  RECONCILE_INTERVAL_MS: '3600000',
  TIMEOUT_SCAN_MS: '3600000',
};
let a: TestOrigin;
let b: TestOrigin;
beforeAll(async () => {
  a = await startTestOrigin(PARKED);
  b = await startTestOrigin(PARKED, a.db);
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

const recoveries = async () =>
  (await counterValue(a, 'seckill_order_lifecycle_total', { transition: 'recover' })) +
  (await counterValue(b, 'seckill_order_lifecycle_total', { transition: 'recover' }));

/** 8 reservations settled into orders, then 4 more left unsettled in the Stream. */
async function midSale(stock: number) {
  const { activityId, skuId } = await a.sale({ stock });
  const settled = await reserveAll(a, activityId, users(100, 8));
  expect(settled.every((r) => r.status === 202)).toBe(true);
  const consumers = await startTestOrigin({ ...PARKED, ORIGIN_ROLE: 'consumers' }, a.db);
  try {
    await waitFor(
      () => count(a, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
      (n) => n === 8,
      30_000,
    );
  } finally {
    await consumers.stop();
  }
  const open = await reserveAll(a, activityId, users(200, 4));
  expect(open.every((r) => r.status === 202)).toBe(true);
  return { activityId, skuId, keys: activityKeys(activityId, skuId) };
}

describe('recovery lock', () => {
  it('two origins recovering the same failover at once: exactly one rebuild, the other sees the proof', async () => {
    const { activityId, skuId, keys } = await midSale(20);
    // The failover lost the holders and the released hash (the Stream survived), and the sale's state
    // was proven on another primary than the one serving it now (warm-up recorded the old one).
    await a.redis.del(keys.holders, keys.released);
    await a.redis.hset(keys.config, 'provenPrimary', 'the-primary-before-the-failover');
    const sale: Sale = { activityId, skuId, buckets: 1 };
    const primaries = (await a.origin.parts.redis.replication.primaries([sale])).get(activityId) as string[];
    expect(primaries.every((p) => typeof p === 'string')).toBe(true);
    const before = await recoveries();

    const outcomes = await Promise.all([
      recoverAfterFailover(failoverRecoveryDeps(a), sale, primaries),
      recoverAfterFailover(failoverRecoveryDeps(b), sale, primaries),
    ]);

    expect(outcomes.map((o) => o.kind).sort()).toEqual(['proven_elsewhere', 'recovered']);
    expect((await recoveries()) - before).toBe(1);
    const recovered = outcomes.find((o) => o.kind === 'recovered')!;
    expect(recovered).toMatchObject({ result: { stock: 20 - 12, holders: 12, unsettled: 4 } });
    // The state is the one rebuild's: stock, every holder back, proven on these primaries, reconciled.
    expect(await a.redis.get(keys.stock)).toBe(String(20 - 12));
    expect(await a.redis.hlen(keys.holders)).toBe(12);
    expect(await a.origin.parts.redis.replication.provenPrimaries(sale)).toEqual(primaries);
    expect(failingChecks(await reconciliation(a, activityId))).toEqual([]);
  });

  it('two operators recover at once: one rebuilds (200), the one that waited finds nothing to recover (409)', async () => {
    const { activityId, keys } = await midSale(20);
    await a.redis.del(keys.stock, keys.holders, keys.released);
    const before = await recoveries();

    const answers = await Promise.all(
      [a, b].map(async (o) => {
        const res = await o.admin('POST', `/admin/activities/${activityId}/recover`);
        return { status: res.status, body: (await res.json()) as any };
      }),
    );

    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(answers.find((r) => r.status === 409)!.body.message).toMatch(/nothing to recover/);
    expect((await recoveries()) - before).toBe(1);
    expect(await a.redis.get(keys.stock)).toBe(String(20 - 12));
    expect(await a.redis.hlen(keys.holders)).toBe(12);
    expect(failingChecks(await reconciliation(a, activityId))).toEqual([]);
  });

  it('a lock held longer than RECOVER_LOCK_WAIT_MS: the admin recover answers 503 busy and changes nothing', async () => {
    const { activityId, keys } = await midSale(20);
    await a.redis.del(keys.stock);
    const impatient = await startTestOrigin({ ...PARKED, RECOVER_LOCK_WAIT_MS: '200' }, a.db);
    // Another process's recovery, as MySQL sees it: the same lock held on a session of its own.
    const holder = await a.db.pool.getConnection();
    const lock = "CONCAT('seckill_recover:', SHA1(CONCAT(COALESCE(DATABASE(), ''), '/', ?)))";
    try {
      const [[got]] = (await holder.query(`SELECT GET_LOCK(${lock}, 0) AS got`, [activityId])) as any;
      expect(Number(got.got)).toBe(1);
      const started = Date.now();
      const res = await impatient.admin('POST', `/admin/activities/${activityId}/recover`);
      expect([res.status, ((await res.json()) as any).error]).toEqual([503, 'busy']);
      expect(Date.now() - started).toBeGreaterThanOrEqual(200);
      expect(await a.redis.exists(keys.stock)).toBe(0);
    } finally {
      await holder.query(`DO RELEASE_LOCK(${lock})`, [activityId]);
      holder.release();
      await impatient.stop();
    }
    // Released: the same call recovers.
    const res = await a.admin('POST', `/admin/activities/${activityId}/recover`);
    expect(res.status).toBe(200);
    expect(await a.redis.get(keys.stock)).toBe(String(20 - 12));
  });
});
