/**
 * The stage of the cluster drills (docs/design.md §10 durability): a real Redis Cluster of 3 masters + 3
 * replicas with AOF and REDIS_WAIT_REPLICAS=1, a settlement origin (the recoverer, in-process) and two
 * HTTP origin processes. `drillCluster()` registers the suite's beforeAll/afterAll and returns the
 * stage, filled in once beforeAll has run. One stage per test file: a drill never starts on a cluster
 * an earlier drill has just failed over.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { freePort, spawnTs, stopChild, waitForHttp } from '../../support/processes.js';
import { signedCall } from './drill.js';
import { startTestOrigin, TEST_SECRETS, waitFor, type TestOrigin } from './origin.js';
import { startLocalCluster, type LocalCluster } from './redis-cluster.js';

export const run = promisify(execFile);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Storm size: the issue asks 6,000 users on 2,000 units (DRILL_USERS / DRILL_STOCK scale it). */
export const USERS = Number(process.env.DRILL_USERS ?? 6000);
export const STOCK = Number(process.env.DRILL_STOCK ?? 2000);

const durability = {
  REDIS_WAIT_REPLICAS: '1',
  REDIS_WAIT_TIMEOUT_MS: '200',
  FAILOVER_POLL_MS: '100',
  REDIS_COMMAND_TIMEOUT_MS: '2000',
  REDIS_BREAKER_OPEN_MS: '100',
  RESERVE_MAX_IN_FLIGHT: '256',
};

export interface DrillStage {
  cluster: LocalCluster;
  t: TestOrigin;
  redis: Cluster;
  /** The recoverer's failover log lines, kept to explain a drill that does not reopen. */
  failoverLog: string[];
  httpOrigins: { url: string; child: ChildProcess }[];
}

export function drillCluster(): DrillStage {
  const stage = { failoverLog: [] as string[], httpOrigins: [] as DrillStage['httpOrigins'] } as DrillStage;
  beforeAll(async () => {
    stage.cluster = await startLocalCluster({ masters: 3, replicas: 1, aof: true, nodeTimeoutMs: 2000 });
    stage.redis = new Cluster(stage.cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
    stage.t = await startTestOrigin({ REDIS_CLUSTER_NODES: stage.cluster.nodes, ...durability }, undefined, {
      log: pino(
        { level: 'warn' },
        { write: (line: string) => void (line.includes('failover') && stage.failoverLog.push(line)) },
      ),
    });
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const child = spawnTs(
        'origin/main.ts',
        {
          ...TEST_SECRETS,
          ...durability,
          PORT: String(port),
          MYSQL_URL: stage.t.db.url,
          REDIS_CLUSTER_NODES: stage.cluster.nodes,
          ORIGIN_ROLE: 'http',
          MYSQL_POOL_SIZE: '3', // status reads only; the MariaDB is shared
          LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
        },
        { quiet: !process.env.TEST_LOG_LEVEL },
      );
      stage.httpOrigins.push({ url: `http://127.0.0.1:${port}`, child });
    }
    await Promise.all(stage.httpOrigins.map((o) => waitForHttp(`${o.url}/healthz`, 60_000)));
  }, 180_000);
  afterAll(async () => {
    await Promise.all(stage.httpOrigins.map((o) => stopChild(o.child)));
    await stage.t?.stop();
    await stage.redis?.quit();
    await stage.cluster?.stop();
  });
  return stage;
}

export const userBase = () => 6_000_000_000 + randomInt(0, 1_000_000) * 10_000;
export const reserveAt = (url: string, activityId: string, userId: string, requestId: string) =>
  signedCall(url, 'POST', '/internal/reserve', { activityId, userId, quantity: 1, requestId });

/** Every HTTP origin serves the sale again (its own watch saw the recoverer's proof). */
export async function allReopened(stage: DrillStage, activityId: string) {
  for (const o of stage.httpOrigins)
    await waitFor(
      () => signedCall(o.url, 'GET', `/internal/activities/${activityId}`),
      (r) => r.status === 200 && r.body.state === 'open',
      60_000,
      100,
    );
}
