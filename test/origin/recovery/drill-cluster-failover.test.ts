/**
 * Drill (a), docs/design.md §10 durability (stage: test/helpers/drill-cluster.ts — 3 masters + 3 replicas,
 * AOF, REDIS_WAIT_REPLICAS=1, two HTTP origins and a settlement origin, the recoverer): SIGKILL the
 * master holding the sale's keys a second into a storm; its replica takes over, the origins close the
 * sale, the recoverer rebuilds it from MySQL + the surviving Stream, everyone reopens by themselves.
 * Every acknowledged reservation is exactly one order, no user has two, orders ≤ stock,
 * reconciliation ok.
 */
import { describe, expect, it } from 'vitest';
import { activityKeys } from '../../../origin/redis/keys.js';
import { counterValue, expectGuarantees, storm } from '../../helpers/drill.js';
import { allReopened, drillCluster, reserveAt, sleep, STOCK, USERS, userBase } from '../../helpers/drill-cluster.js';
import { waitFor } from '../../helpers/origin.js';

const stage = drillCluster();

describe('drill (a): SIGKILL the master of the sale a second into a storm (3 masters + 3 replicas, WAIT 1)', () => {
  it(`${USERS} users on ${STOCK} units: no acknowledged reservation lost, the sale reopens by itself`, async () => {
    const { t, cluster, httpOrigins } = stage;
    const { activityId, skuId } = await t.sale({ stock: STOCK, acceptReplicaRisk: true });
    const master = await cluster.masterOf(activityKeys(activityId, skuId, 0, 1).stock);
    let killedAt: number | null = null;
    let reopenedAt: number | null = null;
    t.origin.failoverWatch.onReopened = (id) => {
      if (id === activityId) reopenedAt = Date.now();
    };
    const base = userBase();
    const users = Array.from({ length: USERS }, (_, i) => String(base + i));
    const running = storm({
      users,
      width: 64,
      deadlineMs: 240_000,
      since: () => reopenedAt,
      reserve: (userId, requestId) =>
        reserveAt(httpOrigins[Number(userId) % httpOrigins.length]!.url, activityId, userId, requestId),
    });
    await sleep(1_000);
    killedAt = Date.now();
    cluster.signal(master, 'SIGKILL');
    // Once the replica has taken over, the dead master comes back as its replica (WAIT 1 needs one).
    await waitFor(
      () => cluster.masterOf(activityKeys(activityId, skuId, 0, 1).stock).catch(() => master),
      (port) => port !== master,
      60_000,
      100,
    );
    const promotedAt = Date.now();
    cluster.restart(master);
    const result = await running;

    expect(await counterValue(t, 'seckill_failover_steps_total', { step: 'detected' })).toBeGreaterThanOrEqual(1);
    expect(await counterValue(t, 'seckill_failover_steps_total', { step: 'recovered' })).toBeGreaterThanOrEqual(1);
    expect(await counterValue(t, 'seckill_failover_steps_total', { step: 'refused' })).toBe(0);
    expect(reopenedAt).not.toBeNull();
    await allReopened(stage, activityId);
    expect(result.firstAckAfter).not.toBeNull();
    expect(result.acknowledged.size + result.refused.size).toBe(USERS);

    console.log(
      `drill (a) cluster failover: kill → replica promoted ${promotedAt - killedAt} ms, kill → reopen ${reopenedAt! - killedAt} ms, ` +
        `sold ${result.acknowledged.size}/${STOCK}; ` +
        `answers ${JSON.stringify(result.tally)}`,
    );
    await expectGuarantees(t, t.db, activityId, STOCK, result.acknowledged);
  }, 400_000);
});
