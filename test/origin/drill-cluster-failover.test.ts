/**
 * Drills (a) and (c), DESIGN §10 durability, on a real Redis Cluster of 3 masters + 3 replicas with
 * AOF and REDIS_WAIT_REPLICAS=1: two HTTP origin processes and a settlement origin (the recoverer).
 *
 * (a) SIGKILL the master holding the sale's keys a second into a storm; its replica takes over, the
 *     origins close the sale, the recoverer rebuilds it from MySQL + the surviving Stream, everyone
 *     reopens by themselves. Every acknowledged reservation is exactly one order, no user has two,
 *     orders ≤ stock, reconciliation ok.
 * (c) A consumer settles entries the replica never received (the replica frozen with SIGSTOP and its
 *     link cut by the master with CLIENT KILL TYPE replica), then
 *     the master dies and the replica takes over without them: MySQL stays the ledger — recovery
 *     counts those orders out of the stock, restores their holders and their Stream entries — and the
 *     buyers who got 503 (unconfirmed) find their reservation by lookup.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activityKeys } from '../../origin/redis/keys.js';
import { freePort, spawnTs, stopChild, waitForHttp } from '../../bench/lib/stack.js';
import { scalar } from '../helpers/db.js';
import { counterValue, expectGuarantees, signedCall, storm } from '../helpers/drill.js';
import { startTestOrigin, TEST_SECRETS, waitFor, type TestOrigin } from '../helpers/origin.js';
import { startLocalCluster, type LocalCluster } from '../helpers/redis-cluster.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Storm size: the issue asks 6,000 users on 2,000 units (DRILL_USERS / DRILL_STOCK scale it). */
const USERS = Number(process.env.DRILL_USERS ?? 6000);
const STOCK = Number(process.env.DRILL_STOCK ?? 2000);

const durability = {
  REDIS_WAIT_REPLICAS: '1',
  REDIS_WAIT_TIMEOUT_MS: '200',
  FAILOVER_POLL_MS: '100',
  REDIS_COMMAND_TIMEOUT_MS: '2000',
  REDIS_BREAKER_OPEN_MS: '100',
  RESERVE_MAX_IN_FLIGHT: '256',
};

let cluster: LocalCluster;
let t: TestOrigin;
let redis: Cluster;
const failoverLog: string[] = [];
const httpOrigins: { url: string; child: ChildProcess }[] = [];

beforeAll(async () => {
  cluster = await startLocalCluster({ masters: 3, replicas: 1, aof: true, nodeTimeoutMs: 2000 });
  redis = new Cluster(cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
  t = await startTestOrigin({ REDIS_CLUSTER_NODES: cluster.nodes, ...durability }, undefined, {
    // The recoverer's failover lines, kept to explain a drill that does not reopen.
    log: pino(
      { level: 'warn' },
      { write: (line: string) => void (line.includes('failover') && failoverLog.push(line)) },
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
        MYSQL_URL: t.db.url,
        REDIS_CLUSTER_NODES: cluster.nodes,
        ORIGIN_ROLE: 'http',
        MYSQL_POOL_SIZE: '3', // status reads only; the MariaDB is shared
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      },
      { quiet: !process.env.TEST_LOG_LEVEL },
    );
    httpOrigins.push({ url: `http://127.0.0.1:${port}`, child });
  }
  await Promise.all(httpOrigins.map((o) => waitForHttp(`${o.url}/healthz`, 60_000)));
}, 180_000);

afterAll(async () => {
  await Promise.all(httpOrigins.map((o) => stopChild(o.child)));
  await t?.stop();
  await redis?.quit();
  await cluster?.stop();
});

const userBase = () => 6_000_000_000 + randomInt(0, 1_000_000) * 10_000;
const reserveAt = (url: string, activityId: string, userId: string, requestId: string) =>
  signedCall(url, 'POST', '/internal/reserve', { activityId, userId, quantity: 1, requestId });

/** Every HTTP origin serves the sale again (its own watch saw the recoverer's proof). */
async function allReopened(activityId: string) {
  for (const o of httpOrigins)
    await waitFor(
      () => signedCall(o.url, 'GET', `/internal/activities/${activityId}`),
      (r) => r.status === 200 && r.body.state === 'open',
      60_000,
      100,
    );
}

describe('drill (a): SIGKILL the master of the sale a second into a storm (3 masters + 3 replicas, WAIT 1)', () => {
  it(`${USERS} users on ${STOCK} units: no acknowledged reservation lost, the sale reopens by itself`, async () => {
    const { activityId, skuId } = await t.sale({ stock: STOCK });
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
    await allReopened(activityId);
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

describe('drill (c): a consumer settled entries the new master never received', () => {
  it('MySQL stays the ledger: recovery counts them, restores their holders and Stream entries; lookups tell the truth', async () => {
    const stock = 20;
    const { activityId, skuId } = await t.sale({ stock });
    const keys = activityKeys(activityId, skuId, 0, 1);
    const master = await cluster.masterOf(keys.stock);
    const replica = await cluster.replicaOf(master);
    const base = userBase();
    const users = Array.from({ length: 40 }, (_, i) => String(base + i));
    const orders = () => scalar(t.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]);

    // 5 reservations confirmed on the replica (WAIT 1; retried while drill (a)'s restarted node still syncs) and settled.
    const first = await storm({
      users: users.slice(0, 5),
      width: 1,
      deadlineMs: 60_000,
      reserve: (userId, requestId) => reserveAt(t.url, activityId, userId, requestId),
    });
    expect(first.acknowledged.size).toBe(5);
    await waitFor(orders, (n) => n === 5, 60_000);

    // The replica freezes: 3 more reservations reach only the master — WAIT cannot confirm them
    // (503 unavailable), but the consumer reads and settles them into MySQL.
    // Frozen, and its link cut by the master, so the bytes cannot wait in its socket for the thaw.
    cluster.signal(replica, 'SIGSTOP');
    await run('redis-cli', ['-p', String(master), 'CLIENT', 'KILL', 'TYPE', 'replica']);
    const lost = users.slice(5, 8);
    for (const u of lost) {
      const r = await reserveAt(t.url, activityId, u, `drill-${u}`);
      expect(r).toMatchObject({ status: 503, body: { error: 'unavailable' } });
    }
    expect(await counterValue(t, 'seckill_reserve_unconfirmed_total', {})).toBeGreaterThanOrEqual(3);
    await waitFor(orders, (n) => n === 8, 60_000);

    // The master dies; the replica wakes without those 3 entries and takes over.
    const reopenedBefore = await counterValue(t, 'seckill_failover_steps_total', { step: 'reopened' });
    cluster.signal(master, 'SIGKILL');
    cluster.signal(replica, 'SIGCONT');
    await run('redis-cli', ['-p', String(replica), 'CLUSTER', 'FAILOVER', 'TAKEOVER']);
    await waitFor(
      () => cluster.masterOf(keys.stock).catch(() => master),
      (port) => port === replica,
      30_000,
    );
    cluster.restart(master); // back as the new master's replica, so WAIT 1 can confirm again
    await waitFor(
      () => counterValue(t, 'seckill_failover_steps_total', { step: 'reopened' }),
      (n) => n > reopenedBefore,
      120_000,
      100,
    ).catch((err) => {
      throw new Error(`${err.message}\nrecoverer's failover log:\n${failoverLog.slice(-20).join('')}`);
    });
    await allReopened(activityId);

    // The new master never had them: recovery appended the three settled reservations again.
    expect(failoverLog.some((line) => line.includes('"restored":3'))).toBe(true);
    // Recovery put the three settled reservations back: stock = 20 − 8, their holders, their entries.
    expect(await redis.get(keys.stock)).toBe(String(stock - 8));
    const [rows] = (await t.db.pool.query('SELECT reservation_id, user_id FROM seckill_order WHERE activity_id = ?', [
      activityId,
    ])) as any;
    const reservationOf = new Map<string, string>(rows.map((r: any) => [String(r.user_id), String(r.reservation_id)]));
    const entries = await redis.xrange(keys.events, '-', '+');
    for (const u of lost) {
      expect(await redis.hget(keys.holders, u)).toBe(reservationOf.get(u));
      expect(entries.some(([, f]) => f.includes(reservationOf.get(u)!))).toBe(true);
      // The buyer told 503 finds the truth: the lookup and a repeat both name the order's reservation.
      const lookup = await signedCall(t.url, 'GET', `/internal/activities/${activityId}/reservation?userId=${u}`);
      expect(lookup).toMatchObject({ status: 200, body: { reservationId: reservationOf.get(u), status: 'ordered' } });
    }
    // A repeat names it too — once a replica confirms (503 `unavailable` until the restarted node has synced).
    const repeats = await storm({
      users: lost,
      width: 1,
      deadlineMs: 60_000,
      reserve: (userId, requestId) => reserveAt(httpOrigins[0]!.url, activityId, userId, requestId),
    });
    for (const u of lost) expect(repeats.acknowledged.get(u)).toBe(reservationOf.get(u));
    expect(repeats.tally['202 queued']).toBeUndefined();

    // The rest sells exactly: 12 more, then sold out.
    const result = await storm({
      users: users.slice(8),
      width: 8,
      deadlineMs: 120_000,
      reserve: (userId, requestId) => reserveAt(httpOrigins[Number(userId) % 2]!.url, activityId, userId, requestId),
    });
    expect(result.acknowledged.size).toBe(stock - 8);
    const acked = new Map(result.acknowledged);
    for (const u of users.slice(0, 8)) acked.set(u, reservationOf.get(u)!);
    expect(first.acknowledged.get(users[0]!)).toBe(reservationOf.get(users[0]!));
    await expectGuarantees(t, t.db, activityId, stock, acked);
  }, 300_000);
});
