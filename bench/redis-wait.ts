/**
 * What REDIS_WAIT_REPLICAS costs (docs/design.md §10 durability), in one run on servers of its own: a Redis
 * primary with one replica (`--replicaof`, no persistence on either, so the figure is the replica
 * round trip and not the disk), then `POST /internal/reserve` of an HTTP origin on that primary
 * (autocannon, signed, a new user each) with REDIS_WAIT_REPLICAS=0 and =1, alternating, two rounds.
 * Same primary, same replica attached, only the setting differs (both with REDIS_COMMAND_TIMEOUT_MS
 * 1000). Only 2xx count: a reservation WAIT did not confirm in time is a 503 `unavailable` (non-2xx).
 *
 *   npx tsx bench/redis-wait.ts [--connections 50] [--seconds 10] [--wait-timeout 50]
 */
import { Redis } from 'ioredis';
import { benchOptions, runAsScript } from './lib/cli.js';
import { alternatingRounds, originReserveRate } from './lib/origin-reserve.js';
import { machineLoad } from './lib/proc.js';
import { startBenchRedis } from './lib/redis-server.js';
import { benchDatabase } from './lib/stack.js';

const options = benchOptions({ numbers: { connections: 50, seconds: 10, 'wait-timeout': 50 } });
const connections = options.connections;
const duration = options.seconds;
const waitTimeoutMs = String(options['wait-timeout']);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchRedisWait() {
  const primary = await startBenchRedis();
  const replica = await startBenchRedis(['--replicaof', '127.0.0.1', String(primary.port)]);
  const replicaClient = new Redis(replica.url, { maxRetriesPerRequest: 1 });
  const database = await benchDatabase();
  try {
    for (let i = 0; !(await replicaClient.info('replication')).includes('master_link_status:up'); i++) {
      if (i > 200) throw new Error('the replica never linked to its primary');
      await sleep(50);
    }
    const env = (replicas: number) => ({
      REDIS_URL: `redis://127.0.0.1:${primary.port}`,
      REDIS_WAIT_REPLICAS: String(replicas),
      REDIS_WAIT_TIMEOUT_MS: waitTimeoutMs,
      // Both arms alike: on a loaded 2-core box the 100 ms default turns queueing into 503s, which
      // would measure the machine's load rather than what WAIT adds.
      REDIS_COMMAND_TIMEOUT_MS: '1000',
    });
    const common = { mysqlUrl: database.url, stockBuckets: 1, connections, duration };
    const { runs: rounds, best } = await alternatingRounds(
      2,
      {
        wait0: () => originReserveRate({ env: env(0), ...common }),
        wait1: () => originReserveRate({ env: env(1), ...common }),
      },
      `origin POST /internal/reserve on a primary with one replica (${connections} connections, ${duration} s each, ` +
        `autocannon, 2 rounds; REDIS_WAIT_TIMEOUT_MS ${waitTimeoutMs})`,
      { wait0: 'REDIS_WAIT_REPLICAS=0', wait1: 'REDIS_WAIT_REPLICAS=1' },
    );
    const { wait0, wait1 } = best;
    const ratio = wait1.rps / wait0.rps;
    console.log(`ratio WAIT 1 / WAIT 0 (best of each) = ${ratio.toFixed(2)}`);
    const { cores, loadAverage } = machineLoad();
    console.log(
      `load generator, origin, 2 redis-servers and MariaDB share ${cores} cores; the replica is on the ` +
        'same machine, so its round trip is sub-millisecond: a real network adds its own. Load average during the ' +
        `run: ${loadAverage}.`,
    );
    return { rounds, wait0, wait1, ratio, waitTimeoutMs: Number(waitTimeoutMs) };
  } finally {
    await database.drop([]);
    replicaClient.disconnect();
    await replica.stop();
    await primary.stop();
  }
}

runAsScript(import.meta.url, benchRedisWait);
