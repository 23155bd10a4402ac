/**
 * A real local Redis Cluster for tests, benchmarks and local runs: `masters` redis-server processes with
 * `--cluster-enabled yes` on free ports below 55000 (the cluster bus takes port + 10000), joined by
 * `redis-cli --cluster create … --cluster-replicas 0 --cluster-yes`, in a temporary folder that
 * `stop()` removes. Runnable on its own: `npx tsx scripts/redis-cluster.ts` prints
 * REDIS_CLUSTER_NODES and keeps the cluster up until Ctrl-C.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface LocalCluster {
  ports: number[];
  /** `127.0.0.1:p1,127.0.0.1:p2,…` — the value for REDIS_CLUSTER_NODES. */
  nodes: string;
  /** Port of the master serving a key, per `CLUSTER KEYSLOT` and `CLUSTER SLOTS`. */
  masterOf(key: string): Promise<number>;
  stop(): Promise<void>;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A port below 55000 whose bus port (+10000) is free too. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = randomInt(20_000, 45_000);
    if (taken.has(port)) continue;
    if ((await portFree(port)) && (await portFree(port + 10_000))) {
      taken.add(port);
      return port;
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...args]);
  return stdout;
}

export async function startLocalCluster(masters = 3): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'seckill-cluster-'));
  const taken = new Set<number>();
  const ports: number[] = [];
  const servers: ChildProcess[] = [];
  const stop = async () => {
    for (const s of servers) if (s.exitCode === null) s.kill('SIGTERM');
    await Promise.all(servers.map((s) => (s.exitCode === null ? new Promise((r) => s.once('exit', r)) : null)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await clusterPort(taken);
      ports.push(port);
      const server = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout',
          '5000',
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
        ],
        { stdio: 'ignore' },
      );
      servers.push(server);
    }
    for (const port of ports) {
      for (let i = 0; ; i++) {
        if ((await cli(port, 'PING').catch(() => '')).trim() === 'PONG') break;
        if (i > 100) throw new Error(`redis-server on ${port} did not start`);
        await sleep(50);
      }
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const port of ports) {
      for (let i = 0; ; i++) {
        if ((await cli(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) break;
        if (i > 200) throw new Error(`cluster node ${port} never reached cluster_state:ok`);
        await sleep(50);
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    ports,
    nodes: ports.map((p) => `127.0.0.1:${p}`).join(','),
    async masterOf(key) {
      const slot = Number((await cli(ports[0]!, 'CLUSTER', 'KEYSLOT', key)).trim());
      const slots = JSON.parse(await cli(ports[0]!, '--json', 'CLUSTER', 'SLOTS')) as [
        number,
        number,
        [string, number],
      ][];
      for (const range of slots) if (slot >= range[0] && slot <= range[1]) return Number(range[2][1]);
      throw new Error(`no master found for slot ${slot}`);
    },
    stop,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cluster = await startLocalCluster(Number(process.argv[2] ?? 3));
  console.log(`REDIS_CLUSTER_NODES=${cluster.nodes}`);
  const stopAll = () => void cluster.stop().then(() => process.exit(0));
  process.on('SIGINT', stopAll);
  process.on('SIGTERM', stopAll);
}
