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
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { originReserveRate } from './lib/origin-reserve.js';
import { benchDatabase } from './lib/stack.js';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '10' },
    'wait-timeout': { type: 'string', default: '50' },
  },
});
const connections = Number(values.connections);
const duration = Number(values.seconds);
const waitTimeoutMs = values['wait-timeout'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A redis-server on a free port below 45000 (retried until one starts), in a folder of its own. */
async function redisServer(extra: string[]): Promise<{ port: number; client: Redis; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(os.tmpdir(), 'seckill-bench-wait-'));
  for (;;) {
    const port = randomInt(20_000, 45_000);
    const server: ChildProcess = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra],
      { stdio: 'ignore' },
    );
    await sleep(300);
    const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 1 });
    const ok = await client
      .connect()
      .then(() => client.ping())
      .then(
        () => server.exitCode === null,
        () => false,
      );
    if (ok)
      return {
        port,
        client,
        async stop() {
          client.disconnect();
          server.kill('SIGTERM');
          await new Promise((r) => server.once('exit', r));
          rmSync(dir, { recursive: true, force: true });
        },
      };
    client.disconnect();
    server.kill();
  }
}

export async function benchRedisWait() {
  const primary = await redisServer([]);
  const replica = await redisServer(['--replicaof', '127.0.0.1', String(primary.port)]);
  const database = await benchDatabase();
  try {
    for (let i = 0; !(await replica.client.info('replication')).includes('master_link_status:up'); i++) {
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
    type Figures = Awaited<ReturnType<typeof originReserveRate>>;
    // Two alternating rounds: the machine is shared, so a single pair can be skewed by a neighbour.
    const rounds: { wait0: Figures; wait1: Figures }[] = [];
    for (let round = 0; round < 2; round++) {
      const common = { mysqlUrl: database.url, stockBuckets: 1, connections, duration };
      const wait0 = await originReserveRate({ env: env(0), ...common });
      const wait1 = await originReserveRate({ env: env(1), ...common });
      rounds.push({ wait0, wait1 });
    }
    console.log(
      `\norigin POST /internal/reserve on a primary with one replica (${connections} connections, ${duration} s each, ` +
        `autocannon, 2 rounds; REDIS_WAIT_TIMEOUT_MS ${waitTimeoutMs})`,
    );
    console.table(
      Object.fromEntries(
        rounds.flatMap((r, i) => [
          [`round ${i + 1}: REDIS_WAIT_REPLICAS=0`, r.wait0],
          [`round ${i + 1}: REDIS_WAIT_REPLICAS=1`, r.wait1],
        ]),
      ),
    );
    const best = (pick: (r: (typeof rounds)[number]) => Figures) =>
      rounds.map(pick).reduce((a, b) => (b.rps > a.rps ? b : a));
    const wait0 = best((r) => r.wait0);
    const wait1 = best((r) => r.wait1);
    const ratio = wait1.rps / wait0.rps;
    console.log(`ratio WAIT 1 / WAIT 0 (best of each) = ${ratio.toFixed(2)}`);
    console.log(
      `load generator, origin, 2 redis-servers and MariaDB share ${os.cpus().length} cores; the replica is on the ` +
        'same machine, so its round trip is sub-millisecond: a real network adds its own. Load average during the ' +
        `run: ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' / ')}.`,
    );
    return { rounds, wait0, wait1, ratio, waitTimeoutMs: Number(waitTimeoutMs) };
  } finally {
    await database.drop([]);
    await replica.stop();
    await primary.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchRedisWait().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
