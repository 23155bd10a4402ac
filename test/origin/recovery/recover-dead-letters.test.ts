/**
 * Dead letters across a failover (docs/design.md §10 durability): a dead-lettered reservation is in MySQL
 * (`seckill_dead_letter`, with the units compensation gave back) and in Redis (its Stream entry,
 * acked; `released[rid]`; the holder freed). A failover can lose the Redis half: the entry itself,
 * or the release and the ack after it. Recovery must account for them from MySQL: the entry appended
 * again, `released` = MySQL's `restocked`, the user free — so reconciliation is exact, a replayed
 * compensation gives back nothing twice, and an operator can still retry the dead letter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activityKeys, CONSUMER_GROUP } from '../../../origin/redis/keys.js';
import { count, failingChecks, reconciliation, reserveAll, users } from '../../helpers/lifecycle.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

const PARKED = {
  ORIGIN_ROLE: 'http',
  FAILOVER_POLL_MS: '3600000',
  RECONCILE_INTERVAL_MS: '3600000',
  TIMEOUT_SCAN_MS: '3600000',
  OUTBOX_POLL_MS: '3600000',
};
let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin(PARKED);
});
afterAll(async () => {
  await t?.stop();
});

const consumers = () =>
  startTestOrigin(
    { ...PARKED, ORIGIN_ROLE: 'consumers', SETTLE_MAX_DELIVERIES: '1', SETTLE_CLAIM_IDLE_MS: '100' },
    t.db,
  );

describe('recover after a failover lost dead letters', () => {
  it('restores lost dead-letter entries and their releases from MySQL; reconciliation ok, nothing given back twice', async () => {
    const STOCK = 5;
    const { activityId, skuId } = await t.sale({ stock: STOCK });
    const keys = activityKeys(activityId, skuId);
    // Orders cannot be written (a column without a default): three reservations become dead letters,
    // each compensated in full (MySQL still has every unit).
    await t.db.pool.query('ALTER TABLE seckill_order ADD COLUMN blocks_settlement INT NOT NULL');
    const [r1, r2, r3] = await reserveAll(t, activityId, users(500, 3), 1);
    let c = await consumers();
    try {
      await waitFor(
        () =>
          count(t, 'SELECT COUNT(*) FROM seckill_dead_letter WHERE activity_id = ? AND restocked = 1', [activityId]),
        (n) => n === 3,
        30_000,
      );
      await waitFor(
        async () => (await t.redis.xpending(keys.events, CONSUMER_GROUP))[0],
        (pending) => pending === 0,
      );
    } finally {
      await c.stop();
      await t.db.pool.query('ALTER TABLE seckill_order DROP COLUMN blocks_settlement');
    }
    expect(await t.redis.get(keys.stock)).toBe(String(STOCK));
    expect(failingChecks(await reconciliation(t, activityId))).toEqual([]);

    // The failover. r1: its entry never reached the new primary (nor its release).
    // r2, r3: the entries did, the acks did not (the group's position is back before them);
    // r2's release was lost too, so its holder is still set.
    const entries = await t.redis.xrange(keys.events, '-', '+');
    const entryOf = (rid: string) => entries.find(([, f]) => f.includes(rid))![0];
    await t.redis.xdel(keys.events, entryOf(r1!.body.reservationId));
    await t.redis.xgroup('SETID', keys.events, CONSUMER_GROUP, entryOf(r1!.body.reservationId));
    await t.redis.hdel(keys.released, r1!.body.reservationId, r2!.body.reservationId);
    await t.redis.hset(keys.holders, r2!.userId, r2!.body.reservationId);
    await t.redis.del(keys.stock); // the failover watch drops the stock before it recovers

    const rec = await t.admin('POST', `/admin/activities/${activityId}/recover`);
    const body = (await rec.json()) as any;
    expect(rec.status).toBe(200);
    // MySQL has all 5 units and owes nothing: the dead letters gave theirs back.
    expect(body).toMatchObject({ stock: STOCK, holders: 0, unsettled: 0, restored: 1 });
    expect(await t.redis.hgetall(keys.released)).toEqual({
      [r1!.body.reservationId]: '1',
      [r2!.body.reservationId]: '1',
      [r3!.body.reservationId]: '1',
    });
    expect(await t.redis.hexists(keys.holders, r2!.userId)).toBe(0);
    const after = await t.redis.xrange(keys.events, '-', '+');
    expect(after.filter(([, f]) => f.includes(r1!.body.reservationId))).toHaveLength(1);
    expect(failingChecks(await reconciliation(t, activityId))).toEqual([]);

    // Settlement reads the three again (r2, r3 redelivered; r1 appended): the dead letters own them,
    // nothing is compensated twice, nothing becomes an order.
    c = await consumers();
    try {
      // Every entry delivered (the group's position is the Stream's last entry, the restored one) and acked.
      const lastId = (await t.redis.xrevrange(keys.events, '+', '-', 'COUNT', 1))[0]![0];
      await waitFor(
        async () => {
          const groups = (await t.redis.xinfo('GROUPS', keys.events)) as any[][];
          const g = groups.find((x) => x[x.indexOf('name') + 1] === CONSUMER_GROUP)!;
          return { delivered: g[g.indexOf('last-delivered-id') + 1], pending: g[g.indexOf('pending') + 1] };
        },
        (g) => g.delivered === lastId && g.pending === 0,
        30_000,
      );
      expect(await t.redis.get(keys.stock)).toBe(String(STOCK));
      expect(await count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId])).toBe(0);
      expect(await count(t, 'SELECT SUM(restocked) FROM seckill_dead_letter WHERE activity_id = ?', [activityId])).toBe(
        3,
      );
      expect(failingChecks(await reconciliation(t, activityId))).toEqual([]);

      // The operator can still retry the dead letter whose entry was lost: it becomes an order.
      const retry = await t.admin('POST', `/admin/dead-letters/${r1!.body.reservationId}/retry`);
      expect(await retry.json()).toEqual({ reservationId: r1!.body.reservationId, status: 'retried', requeued: true });
      await waitFor(
        () =>
          count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ? AND reservation_id = ?', [
            activityId,
            r1!.body.reservationId,
          ]),
        (n) => n === 1,
        30_000,
      );
      // The rest sells exactly.
      const rest = await reserveAll(t, activityId, users(600, 6));
      expect(rest.filter((r) => r.status === 202)).toHaveLength(STOCK - 1);
      await waitFor(
        () => count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
        (n) => n === STOCK,
        30_000,
      );
      await waitFor(
        async () => failingChecks(await reconciliation(t, activityId)),
        (failing) => failing.length === 0,
        10_000,
      );
    } finally {
      await c.stop();
    }
  });
});
