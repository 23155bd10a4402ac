/**
 * A real local Redis Cluster for tests, benchmarks and local runs: `masters` (× (1 + `replicas`)) redis-server
 * processes with `--cluster-enabled yes` on free ports below 55000 (the cluster bus takes port +
 * 10000), joined by `redis-cli --cluster create … --cluster-replicas <replicas> --cluster-yes`, in a
 * temporary folder that `stop()` removes. `aof: true` gives every node an append-only file
 * (`appendfsync everysec`), as a cluster that claims persistence must have. Runnable on its own:
 * `npx tsx scripts/redis-cluster.ts [masters] [replicas]` prints REDIS_CLUSTER_NODES and keeps
 * the cluster up until Ctrl-C.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ClusterOptions {
  masters?: number;
  /** Replicas per master (`--cluster-replicas`). */
  replicas?: number;
  /** `appendonly yes`, `appendfsync everysec` on every node. */
  aof?: boolean;
  /** `cluster-node-timeout`: how long a master must be unreachable before its replica takes over. */
  nodeTimeoutMs?: number;
}

export interface LocalCluster {
  /** Every node's port, masters and replicas. */
  ports: number[];
  /** `127.0.0.1:p1,127.0.0.1:p2,…` — the value for REDIS_CLUSTER_NODES. */
  nodes: string;
  /** Port of the master serving a key, per `CLUSTER KEYSLOT` and `CLUSTER SLOTS`. */
  masterOf(key: string): Promise<number>;
  /** Port of a replica of the master on `port`. */
  replicaOf(port: number): Promise<number>;
  /** Sends a signal to the node on `port` (SIGKILL for a crash, SIGSTOP/SIGCONT to freeze it). */
  signal(port: number, signal: NodeJS.Signals): void;
  /** Starts the (killed) node on `port` again with its config file: it rejoins, as a replica if its slots moved. */
  restart(port: number): void;
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

export async function startLocalCluster(options: number | ClusterOptions = 3): Promise<LocalCluster> {
  const opts = typeof options === 'number' ? { masters: options } : options;
  const masters = opts.masters ?? 3;
  const replicas = opts.replicas ?? 0;
  const dir = mkdtempSync(join(tmpdir(), 'seckill-cluster-'));
  const taken = new Set<number>();
  const ports: number[] = [];
  const servers: ChildProcess[] = [];
  const alive = (s: ChildProcess) => s.exitCode === null && s.signalCode === null;
  const stop = async () => {
    const running = servers.filter(alive);
    for (const s of running) {
      s.kill('SIGCONT');
      s.kill('SIGTERM');
    }
    await Promise.all(running.map((s) => new Promise((r) => s.once('exit', r))));
    rmSync(dir, { recursive: true, force: true });
  };
  const spawnNode = (port: number) =>
    spawn(
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
        String(opts.nodeTimeoutMs ?? 5000),
        '--dir',
        dir,
        '--save',
        '',
        ...(opts.aof
          ? [
              '--appendonly',
              'yes',
              '--appendfsync',
              'everysec',
              '--appendfilename',
              `appendonly-${port}.aof`,
              '--appenddirname',
              `aof-${port}`,
            ]
          : ['--appendonly', 'no']),
      ],
      { stdio: 'ignore' },
    );
  try {
    for (let i = 0; i < masters * (1 + replicas); i++) {
      const port = await clusterPort(taken);
      ports.push(port);
      servers.push(spawnNode(port));
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
      String(replicas),
      '--cluster-yes',
    ]);
    for (const port of ports) {
      for (let i = 0; ; i++) {
        if ((await cli(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) break;
        if (i > 200) throw new Error(`cluster node ${port} never reached cluster_state:ok`);
        await sleep(50);
      }
    }
    // Every replica has its master's data before the test writes: `master_link_status:up`.
    for (const port of ports) {
      for (let i = 0; ; i++) {
        const info = await cli(port, 'INFO', 'replication');
        if (info.includes('role:master') || info.includes('master_link_status:up')) break;
        if (i > 400) throw new Error(`replica ${port} never linked to its master`);
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
      // Any node still up answers (a test may have killed some).
      const up = ports.find((_p, i) => alive(servers[i]!)) ?? ports[0]!;
      const slot = Number((await cli(up, 'CLUSTER', 'KEYSLOT', key)).trim());
      const slots = JSON.parse(await cli(up, '--json', 'CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      for (const range of slots) if (slot >= range[0] && slot <= range[1]) return Number(range[2][1]);
      throw new Error(`no master found for slot ${slot}`);
    },
    async replicaOf(port) {
      for (const candidate of ports) {
        if (candidate === port) continue;
        const info = await cli(candidate, 'INFO', 'replication').catch(() => '');
        if (info.includes('role:slave') && info.includes(`master_port:${port}`)) return candidate;
      }
      throw new Error(`no replica of ${port}`);
    },
    signal(port, signal) {
      servers[ports.indexOf(port)]!.kill(signal);
    },
    restart(port) {
      servers[ports.indexOf(port)] = spawnNode(port);
    },
    stop,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cluster = await startLocalCluster({
    masters: Number(process.argv[2] ?? 3),
    replicas: Number(process.argv[3] ?? 0),
  });
  console.log(`REDIS_CLUSTER_NODES=${cluster.nodes}`);
  const stopAll = () => void cluster.stop().then(() => process.exit(0));
  process.on('SIGINT', stopAll);
  process.on('SIGTERM', stopAll);
}
