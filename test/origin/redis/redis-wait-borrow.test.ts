/**
 * REDIS_WAIT_REPLICAS covers every node a borrow wrote to (docs/design.md §10 durability, stock buckets): a
 * reservation that borrowed its unit from a donor bucket on another cluster master is promised (202)
 * only once that master's replica has the take too. A real 3 + 3 cluster: the donor master's replica
 * is frozen (SIGSTOP, its link cut), the home master's replica is live — the borrow is answered 503
 * `unavailable`, and so is its repeat, until the donor's replica is back; then the repeat is a 200
 * with the same reservation.
 */
import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homeBucket } from '../../../origin/redis/buckets.js';
import { activityKeys } from '../../../origin/redis/keys.js';
import { counterValue } from '../../helpers/drill.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';
import { startLocalCluster, type LocalCluster } from '../../helpers/redis-cluster.js';

const run = promisify(execFile);
const BUCKETS = 3;
let cluster: LocalCluster;
let t: TestOrigin;

beforeAll(async () => {
  cluster = await startLocalCluster({ masters: 3, replicas: 1 });
  t = await startTestOrigin({
    REDIS_CLUSTER_NODES: cluster.nodes,
    REDIS_WAIT_REPLICAS: '1',
    REDIS_WAIT_TIMEOUT_MS: '300',
    REDIS_COMMAND_TIMEOUT_MS: '5000',
    FAILOVER_POLL_MS: '3600000',
  });
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await cluster?.stop();
});

/** A fresh user id whose home is `bucket`. */
const userIn = (bucket: number) => {
  for (;;) {
    const u = String(7_000_000_000 + randomInt(0, 1_000_000_000));
    if (homeBucket(u, BUCKETS) === bucket) return u;
  }
};
const reserve = async (activityId: string, userId: string) => {
  const res = await t.internal('POST', '/internal/reserve', {
    activityId,
    userId,
    quantity: 1,
    requestId: `b-${userId}`,
  });
  return { status: res.status, body: (await res.json()) as any };
};

describe('REDIS_WAIT_REPLICAS=1 with stock buckets on a cluster', () => {
  it('a borrow from a donor on another master is 503 unavailable while that master has no replica; 200 once it has', async () => {
    // One unit per bucket; a home and a donor on two different masters (a new sale until there is one).
    let sale: { activityId: string; skuId: string };
    let masters: number[];
    let pair: [number, number] | undefined;
    do {
      sale = await t.sale({ stock: BUCKETS, stockBuckets: BUCKETS, acceptReplicaRisk: true });
      const s = sale;
      masters = await Promise.all(
        Array.from({ length: BUCKETS }, (_, b) =>
          cluster.masterOf(activityKeys(s.activityId, s.skuId, b, BUCKETS).stock),
        ),
      );
      const m = masters;
      for (let h = 0; h < BUCKETS && !pair; h++)
        for (let d = 0; d < BUCKETS && !pair; d++) if (m[h] !== m[d]) pair = [h, d];
    } while (!pair);
    const [home, donor] = pair;
    const { activityId } = sale;

    // Every bucket but the donor's sold out, each confirmed on its own master's replica (202).
    for (let b = 0; b < BUCKETS; b++) if (b !== donor) expect((await reserve(activityId, userIn(b))).status).toBe(202);

    // The donor's master loses its replica: frozen, and its link cut so nothing waits in its socket.
    const donorReplica = await cluster.replicaOf(masters[donor]!);
    cluster.signal(donorReplica, 'SIGSTOP');
    try {
      await run('redis-cli', ['-p', String(masters[donor]), 'CLIENT', 'KILL', 'TYPE', 'replica']);
      const before = await counterValue(t, 'seckill_reserve_unconfirmed_total', {});
      const buyer = userIn(home);
      // Home is empty: the unit is borrowed from the donor. Home's replica confirms; the donor's cannot.
      const first = await reserve(activityId, buyer);
      expect(first).toMatchObject({ status: 503, body: { error: 'unavailable' } });
      // It exists on the primaries: the home bucket holds it, confirmed from the donor.
      const homeKeys = activityKeys(activityId, sale.skuId, home, BUCKETS);
      const reservationId = await t.origin.parts.redis.requests.holderOf({ ...sale, buckets: BUCKETS }, buyer);
      expect(reservationId).toMatch(/\S/);
      const redis = new Cluster(cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
      try {
        expect(await redis.hget(homeKeys.borrowing, reservationId!)).toBe(`c|${donor}`);
      } finally {
        redis.disconnect();
      }
      // A repeat is promised no more than the first answer was: the donor's write is still unconfirmed.
      expect(await reserve(activityId, buyer)).toMatchObject({ status: 503, body: { error: 'unavailable' } });
      expect((await counterValue(t, 'seckill_reserve_unconfirmed_total', {})) - before).toBe(2);

      // The replica is back and catches up: the same reservation is confirmed now.
      cluster.signal(donorReplica, 'SIGCONT');
      await waitFor(
        () =>
          run('redis-cli', ['-p', String(donorReplica), 'INFO', 'replication']).then(
            (r) => r.stdout,
            () => '',
          ),
        (info) => info.includes('master_link_status:up'),
        30_000,
      );
      const again = await waitFor(
        () => reserve(activityId, buyer),
        (r) => r.status !== 503,
        30_000,
      );
      expect(again).toMatchObject({ status: 200, body: { reservationId } });
    } finally {
      cluster.signal(donorReplica, 'SIGCONT');
    }
  }, 120_000);
});
