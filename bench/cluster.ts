/**
 * Cluster benchmark (docs/design.md §10), in one run on fresh servers of its own:
 *   1. Redis level, pipelined: decisions/s of lua/reserve-6.lua on one key of one standalone Redis,
 *      on one key of a 3-master cluster, and on 8 buckets over the 3 masters (each user on its home
 *      bucket). Every decision is a new user granted a unit (DECRBY + HSET + XADD), never a refusal.
 *   2. Origin level: `POST /internal/reserve` (autocannon, signed, a new user each) of an HTTP origin
 *      on the standalone Redis with stockBuckets 1 vs one on the cluster with stockBuckets 8.
 *      Goal: cluster / single >= 0.8.
 *
 *   npx tsx bench/cluster.ts [--decisions 100000] [--connections 50] [--seconds 10]
 */
import { randomInt } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { homeBucket, splitStock } from '../origin/redis/buckets.js';
import type { RedisClient } from '../origin/redis/client.js';
import { activityKeys } from '../origin/redis/keys.js';
import { reserveScript } from '../origin/redis/scripts/reserve.js';
import { ScriptRunner, type Reply } from '../origin/redis/scripts/runner.js';
import { warmupScript } from '../origin/redis/scripts/warmup.js';
import { startLocalCluster } from '../scripts/redis-cluster.js';
import { benchOptions, runAsScript } from './lib/cli.js';
import { alternatingRounds, originReserveRate } from './lib/origin-reserve.js';
import { machineLoad } from './lib/proc.js';
import { startBenchRedis } from './lib/redis-server.js';
import { benchDatabase } from './lib/stack.js';

const options = benchOptions({ numbers: { decisions: 100_000, connections: 50, seconds: 10 } });
const DECISIONS = options.decisions;
const connections = options.connections;
const duration = options.seconds;
/** EVALSHA calls per explicit pipeline (one slot each). */
const PIPELINE = 500;

/**
 * Decisions/s of the reserve script for DECISIONS new users, each on their home bucket: EVALSHA in
 * explicit pipelines of PIPELINE calls per bucket (a cluster pipeline must stay on one slot), all
 * buckets' pipelines in flight together.
 */
async function scriptRate(client: RedisClient, buckets: number): Promise<number> {
  const scripts = new ScriptRunner(client);
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  await Promise.all(nodes.map((node) => node.script('LOAD', scripts.source(reserveScript))));
  const activityId = String(randomInt(1, 2 ** 40));
  const shares = splitStock(DECISIONS * 2, buckets);
  const keys = Array.from({ length: buckets }, (_, b) => activityKeys(activityId, activityId, b, buckets));
  for (const [b, k] of keys.entries())
    await scripts.run(warmupScript, k, { stock: shares[b]!, state: 'open', maxPerUser: 1 });
  // Users grouped by home bucket beforehand: the timed part is Redis work, not hashing.
  const base = randomInt(1, 2 ** 40);
  const byBucket: string[][] = keys.map(() => []);
  for (let j = 0; j < DECISIONS; j++) byBucket[homeBucket(String(base + j), buckets)]!.push(String(base + j));
  const started = performance.now();
  let granted = 0;
  await Promise.all(
    byBucket.map(async (users, b) => {
      const k = keys[b]!;
      for (let i = 0; i < users.length; i += PIPELINE) {
        const pipeline = client.pipeline();
        for (const userId of users.slice(i, i + PIPELINE))
          scripts.queue(pipeline, reserveScript, k, {
            userId,
            quantity: 1,
            reservationId: `${activityId}-${userId.padStart(32, '0')}`,
            requestId: `r${userId}`,
            traceId: '',
            now: Date.now(),
            mayBorrow: buckets > 1,
            checkEligibility: true,
          });
        for (const [err, reply] of (await pipeline.exec()) ?? [])
          if (!err && reserveScript.decode(reply as Reply).kind === 'reserved') granted++;
      }
    }),
  );
  const rate = DECISIONS / ((performance.now() - started) / 1000);
  if (granted !== DECISIONS) throw new Error(`${DECISIONS - granted} decisions were not grants`);
  for (const k of keys) await Promise.all(Object.values(k).map((key) => client.del(key)));
  return rate;
}

const originRate = (env: Record<string, string>, mysqlUrl: string, stockBuckets: number) =>
  originReserveRate({ env, mysqlUrl, stockBuckets, connections, duration });

export async function benchCluster() {
  const single = await startBenchRedis();
  const cluster = await startLocalCluster(3);
  const database = await benchDatabase();
  const clusterClient = new Cluster(
    cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
    {
      enableAutoPipelining: true,
    },
  );
  const singleClient = new Redis(single.url, { enableAutoPipelining: true });
  try {
    const oneKeyOneNode = await scriptRate(singleClient, 1);
    const oneKeyCluster = await scriptRate(clusterClient, 1);
    const eightBuckets = await scriptRate(clusterClient, 8);
    console.log(
      `\nreserve script, pipelined (${DECISIONS} decisions each, pipelines of ${PIPELINE} EVALSHA per bucket)`,
    );
    console.table({
      'one key, standalone Redis': { 'decisions/s': Math.round(oneKeyOneNode) },
      'one key, 3-master cluster (one master busy)': { 'decisions/s': Math.round(oneKeyCluster) },
      '8 buckets over 3 masters': { 'decisions/s': Math.round(eightBuckets) },
    });
    console.log(`8 buckets / one key one node = ${(eightBuckets / oneKeyOneNode).toFixed(2)}`);

    const { runs: rounds, best } = await alternatingRounds(
      2,
      {
        onSingle: () => originRate({ REDIS_URL: single.url }, database.url, 1),
        onCluster: () => originRate({ REDIS_CLUSTER_NODES: cluster.nodes }, database.url, 8),
      },
      `origin POST /internal/reserve (${connections} connections, ${duration} s each, autocannon, 2 rounds)`,
      { onSingle: 'single Redis, stockBuckets 1', onCluster: '3-master cluster, stockBuckets 8' },
    );
    const ratio = best.onCluster.rps / best.onSingle.rps;
    console.log(`ratio cluster/single (best of each) = ${ratio.toFixed(2)} (goal >= 0.8)`);
    const { cores, loadAverage } = machineLoad();
    console.log(
      `all of it — load generator, origin, ${cluster.ports.length + 1} redis-servers, MariaDB — shares ${cores} cores: ` +
        'the cluster cannot add CPU here, so these figures show what the cluster path costs, not what it adds. ' +
        `Load average during the run: ${loadAverage}.`,
    );
    return { oneKeyOneNode, oneKeyCluster, eightBuckets, rounds, ratio };
  } finally {
    singleClient.disconnect();
    clusterClient.disconnect();
    await database.drop([]);
    await cluster.stop();
    await single.stop();
  }
}

runAsScript(import.meta.url, benchCluster);
