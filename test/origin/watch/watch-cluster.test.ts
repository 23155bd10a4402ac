/**
 * On a Redis Cluster /metrics shows every node in use, replicas included: connected clients,
 * maxclients and slow-log growth per node (docs/watching-a-sale.md).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLocalCluster, type LocalCluster } from '../../helpers/redis-cluster.js';
import { startTestOrigin, type TestOrigin } from '../../helpers/origin.js';

let cluster: LocalCluster;
let t: TestOrigin;

beforeAll(async () => {
  cluster = await startLocalCluster({ masters: 3, replicas: 1 });
  t = await startTestOrigin({ REDIS_CLUSTER_NODES: cluster.nodes, METRICS_CACHE_MS: '0' });
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await cluster?.stop();
});

async function series(name: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const out = new Map<string, number>();
  for (const m of text.matchAll(new RegExp(`^${name}\\{node="([^"]+)"\\} (\\S+)$`, 'gm'))) out.set(m[1]!, Number(m[2]));
  return out;
}

it('every master and replica has clients, maxclients and a slow-log count; a slow script counts on its node', async () => {
  const everyNode = cluster.ports.map((port) => `127.0.0.1:${port}`).sort();
  // ioredis learns the replicas from CLUSTER SLOTS after connecting; a replica the cluster lists only
  // after ioredis's first read comes with its next slots refresh (every few seconds), so allow 20 s.
  let maxclients = new Map<string, number>();
  for (const until = Date.now() + 20_000; Date.now() < until && maxclients.size < everyNode.length;) {
    maxclients = await series('seckill_redis_maxclients');
    await new Promise((r) => setTimeout(r, 100));
  }
  expect([...maxclients.keys()].sort()).toEqual(everyNode);
  expect([...(await series('seckill_redis_connected_clients')).keys()].sort()).toEqual(everyNode);

  const node = everyNode[0]!;
  const direct = new Redis(Number(node.split(':')[1]));
  try {
    const before = (await series('seckill_redis_slowlog_entries_total')).get(node)!;
    await direct.config('SET', 'slowlog-log-slower-than', '5000');
    await direct.eval('local i = 0 while i < 3000000 do i = i + 1 end return i', 0);
    const after = await series('seckill_redis_slowlog_entries_total');
    expect(after.get(node)! - before).toBe(1);
  } finally {
    direct.disconnect();
  }
});
