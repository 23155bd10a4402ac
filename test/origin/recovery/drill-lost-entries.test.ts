/**
 * Drill (c), docs/design.md §10 durability (stage: test/helpers/drill-cluster.ts, a cluster of its own): a
 * consumer settles entries the replica never received (the replica frozen with SIGSTOP and its link
 * cut by the master with CLIENT KILL TYPE replica), then the master dies and the replica takes over
 * without them: MySQL stays the ledger — recovery counts those orders out of the stock, restores
 * their holders and their Stream entries — and the buyers who got 503 (unconfirmed) find their
 * reservation by lookup.
 */
import { describe, expect, it } from 'vitest';
import { activityKeys } from '../../../origin/redis/keys.js';
import { scalar } from '../../helpers/db.js';
import { counterValue, expectGuarantees, signedCall, storm } from '../../helpers/drill.js';
import { allReopened, drillCluster, reserveAt, run, userBase } from '../../helpers/drill-cluster.js';
import { waitFor } from '../../helpers/origin.js';

const stage = drillCluster();

describe('drill (c): a consumer settled entries the new master never received', () => {
  it('MySQL stays the ledger: recovery counts them, restores their holders and Stream entries; lookups tell the truth', async () => {
    const { t, cluster, redis, httpOrigins, failoverLog } = stage;
    const stock = 20;
    const { activityId, skuId } = await t.sale({ stock, acceptReplicaRisk: true });
    const keys = activityKeys(activityId, skuId, 0, 1);
    const master = await cluster.masterOf(keys.stock);
    const replica = await cluster.replicaOf(master);
    const base = userBase();
    const users = Array.from({ length: 40 }, (_, i) => String(base + i));
    const orders = () => scalar(t.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]);

    // 5 reservations confirmed on the replica (WAIT 1; retried while drill (a)'s restarted node still syncs) and settled.
    const first = await storm({
      users: users.slice(0, 5),
      width: 1,
      deadlineMs: 60_000,
      reserve: (userId, requestId) => reserveAt(t.url, activityId, userId, requestId),
    });
    expect(first.acknowledged.size).toBe(5);
    await waitFor(orders, (n) => n === 5, 60_000);

    // The replica freezes: 3 more reservations reach only the master — WAIT cannot confirm them
    // (503 unavailable), but the consumer reads and settles them into MySQL.
    // Frozen, and its link cut by the master, so the bytes cannot wait in its socket for the thaw.
    cluster.signal(replica, 'SIGSTOP');
    await run('redis-cli', ['-p', String(master), 'CLIENT', 'KILL', 'TYPE', 'replica']);
    const lost = users.slice(5, 8);
    for (const u of lost) {
      const r = await reserveAt(t.url, activityId, u, `drill-${u}`);
      expect(r).toMatchObject({ status: 503, body: { error: 'unavailable' } });
    }
    expect(await counterValue(t, 'seckill_reserve_unconfirmed_total', {})).toBeGreaterThanOrEqual(3);
    await waitFor(orders, (n) => n === 8, 60_000);

    // The master dies; the replica wakes without those 3 entries and takes over.
    const reopenedBefore = await counterValue(t, 'seckill_failover_steps_total', { step: 'reopened' });
    cluster.signal(master, 'SIGKILL');
    cluster.signal(replica, 'SIGCONT');
    await run('redis-cli', ['-p', String(replica), 'CLUSTER', 'FAILOVER', 'TAKEOVER']);
    await waitFor(
      () => cluster.masterOf(keys.stock).catch(() => master),
      (port) => port === replica,
      30_000,
    );
    cluster.restart(master); // back as the new master's replica, so WAIT 1 can confirm again
    await waitFor(
      () => counterValue(t, 'seckill_failover_steps_total', { step: 'reopened' }),
      (n) => n > reopenedBefore,
      120_000,
      100,
    ).catch((err) => {
      throw new Error(`${err.message}\nrecoverer's failover log:\n${failoverLog.slice(-20).join('')}`);
    });
    await allReopened(stage, activityId);

    // The new master never had them: recovery appended the three settled reservations again.
    expect(failoverLog.some((line) => line.includes('"restored":3'))).toBe(true);
    // Recovery put the three settled reservations back: stock = 20 − 8, their holders, their entries.
    expect(await redis.get(keys.stock)).toBe(String(stock - 8));
    const [rows] = (await t.db.pool.query('SELECT reservation_id, user_id FROM seckill_order WHERE activity_id = ?', [
      activityId,
    ])) as any;
    const reservationOf = new Map<string, string>(rows.map((r: any) => [String(r.user_id), String(r.reservation_id)]));
    const entries = await redis.xrange(keys.events, '-', '+');
    for (const u of lost) {
      expect(await redis.hget(keys.holders, u)).toBe(reservationOf.get(u));
      expect(entries.some(([, f]) => f.includes(reservationOf.get(u)!))).toBe(true);
      // The buyer told 503 finds the truth: the lookup and a repeat both name the order's reservation.
      const lookup = await signedCall(t.url, 'GET', `/internal/activities/${activityId}/reservation?userId=${u}`);
      expect(lookup).toMatchObject({ status: 200, body: { reservationId: reservationOf.get(u), status: 'ordered' } });
    }
    // A repeat names it too — once a replica confirms (503 `unavailable` until the restarted node has synced).
    const repeats = await storm({
      users: lost,
      width: 1,
      deadlineMs: 60_000,
      reserve: (userId, requestId) => reserveAt(httpOrigins[0]!.url, activityId, userId, requestId),
    });
    for (const u of lost) expect(repeats.acknowledged.get(u)).toBe(reservationOf.get(u));
    expect(repeats.tally['202 queued']).toBeUndefined();

    // The rest sells exactly: 12 more, then sold out.
    const result = await storm({
      users: users.slice(8),
      width: 8,
      deadlineMs: 120_000,
      reserve: (userId, requestId) => reserveAt(httpOrigins[Number(userId) % 2]!.url, activityId, userId, requestId),
    });
    expect(result.acknowledged.size).toBe(stock - 8);
    const acked = new Map(result.acknowledged);
    for (const u of users.slice(0, 8)) acked.set(u, reservationOf.get(u)!);
    expect(first.acknowledged.get(users[0]!)).toBe(reservationOf.get(users[0]!));
    await expectGuarantees(t, t.db, activityId, stock, acked);
  }, 300_000);
});
