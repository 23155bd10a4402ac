/**
 * Bucketed stock on a real local Redis Cluster (3 masters, test/helpers/redis-cluster.ts), docs/design.md
 * §10: two HTTP origin processes plus a consumer origin share the cluster and MySQL; borrowing
 * between buckets sells every unit; a process killed mid-borrow leaves units in transit that
 * reconciliation names and recover returns.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signEdgeRequest } from '../../../contract/signing.js';
import { homeBucket } from '../../../origin/redis/buckets.js';
import { activityKeys } from '../../../origin/redis/keys.js';
import { freePort, spawnTs, stopChild, waitForHttp } from '../../../support/processes.js';
import { scalar } from '../../helpers/db.js';
import { startTestOrigin, TEST_SECRETS, waitFor, type TestOrigin } from '../../helpers/origin.js';
import { startLocalCluster, type LocalCluster } from '../../helpers/redis-cluster.js';

let cluster: LocalCluster;
let t: TestOrigin;
let redis: Cluster;
const httpOrigins: { url: string; child: ChildProcess }[] = [];

beforeAll(async () => {
  cluster = await startLocalCluster(3);
  redis = new Cluster(cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
  // Admin, settlement consumers and jobs; recover treats a borrow as stranded after 100 ms.
  t = await startTestOrigin({ REDIS_CLUSTER_NODES: cluster.nodes, BORROW_STALE_MS: '100' });
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const child = spawnTs(
      'origin/main.ts',
      {
        ...TEST_SECRETS,
        PORT: String(port),
        MYSQL_URL: t.db.url,
        REDIS_CLUSTER_NODES: cluster.nodes,
        ORIGIN_ROLE: 'http',
        LOG_LEVEL: 'silent',
        REDIS_COMMAND_TIMEOUT_MS: '2000',
        RESERVE_MAX_IN_FLIGHT: '256',
      },
      { quiet: true },
    );
    httpOrigins.push({ url: `http://127.0.0.1:${port}`, child });
  }
  await Promise.all(httpOrigins.map((o) => waitForHttp(`${o.url}/healthz`, 60_000)));
}, 120_000);

afterAll(async () => {
  await Promise.all(httpOrigins.map((o) => stopChild(o.child)));
  await t?.stop();
  await redis?.quit();
  await cluster?.stop();
});

async function signed(url: string, method: 'GET' | 'POST', path: string, body?: unknown) {
  const text = body === undefined ? '' : JSON.stringify(body);
  const headers = await signEdgeRequest(TEST_SECRETS.EDGE_ORIGIN_SECRET, { method, pathWithQuery: path, body: text });
  const res = await fetch(url + path, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    body: method === 'POST' ? text : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** A client as the edge would be: 503 busy is answered again after a short pause (Retry-After). */
async function reserve(url: string, activityId: string, userId: string, requestId: string) {
  for (let attempt = 0; ; attempt++) {
    const r = await signed(url, 'POST', '/internal/reserve', { activityId, userId, quantity: 1, requestId });
    if (r.status !== 503 || r.body.error !== 'busy' || attempt >= 20) return r;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function inParallel<T>(items: T[], width: number, work: (item: T) => Promise<void>) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) await work(next);
    }),
  );
}

const reconciliation = async (activityId: string) =>
  (await (await t.admin('GET', `/admin/activities/${activityId}/reconciliation`)).json()) as any;
const orders = (activityId: string) =>
  scalar(t.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]);
const userBase = () => 5_000_000_000 + randomInt(0, 1_000_000) * 10_000;
/** `n` user ids whose home bucket (FNV-1a mod B) is `bucket`. */
function usersHomedAt(bucket: number, buckets: number, n: number): string[] {
  const users: string[] = [];
  for (let id = userBase(); users.length < n; id++)
    if (homeBucket(String(id), buckets) === bucket) users.push(String(id));
  return users;
}

describe('8 buckets on a 3-master cluster, two HTTP origin processes', () => {
  // Four buyers per unit, each calling both HTTP processes at once: the contention, not the count,
  // is what can sell a unit twice.
  const STOCK = 500;
  const USERS = 4 * STOCK;
  it(`${USERS} users × 2 concurrent calls, stock ${STOCK}: exactly ${STOCK} sold, one order per user, repeats the same`, async () => {
    const { activityId, skuId } = await t.sale({ stock: STOCK, stockBuckets: 8 });
    const masters = new Set(
      await Promise.all(
        Array.from({ length: 8 }, (_, b) => cluster.masterOf(activityKeys(activityId, skuId, b, 8).stock)),
      ),
    );
    expect(masters.size).toBeGreaterThanOrEqual(2);

    const base = userBase();
    const users = Array.from({ length: USERS }, (_, i) => String(base + i));
    const answers = new Map<string, { status: number; body: any }[]>();
    await inParallel(users, 48, async (userId) => {
      const sameKey = Number(userId) % 2 === 0; // half repeat the Idempotency-Key, half use a new one
      const calls = await Promise.all(
        httpOrigins.map((o, i) => reserve(o.url, activityId, userId, sameKey ? `k-${userId}` : `k-${userId}-${i}`)),
      );
      answers.set(userId, calls);
    });

    const tally: Record<string, number> = {};
    for (const calls of answers.values())
      for (const c of calls)
        tally[`${c.status} ${c.body.error ?? c.body.status}`] =
          (tally[`${c.status} ${c.body.error ?? c.body.status}`] ?? 0) + 1;
    const winners = [...answers].filter(([, calls]) => calls.some((c) => c.status === 202));
    expect(tally['202 queued']).toBe(STOCK);
    expect(winners.length).toBe(STOCK);
    for (const [, calls] of winners) {
      // One call granted it; the other got the very same reservation (200) — never a second one.
      const ids = new Set(calls.filter((c) => c.status < 300).map((c) => c.body.reservationId));
      expect(ids.size).toBe(1);
      expect(calls.filter((c) => c.status === 202)).toHaveLength(1);
    }
    for (const calls of answers.values()) for (const c of calls) expect([200, 202, 409]).toContain(c.status);

    await waitFor(
      () => orders(activityId),
      (n) => n >= STOCK,
      120_000,
    );
    expect(await orders(activityId)).toBe(STOCK);
    expect(
      await scalar(t.db.pool, 'SELECT COUNT(DISTINCT user_id) FROM seckill_order WHERE activity_id = ?', [activityId]),
    ).toBe(STOCK);
    const [rows] = (await t.db.pool.query('SELECT user_id FROM seckill_order WHERE activity_id = ?', [
      activityId,
    ])) as any;
    expect(new Set(rows.map((r: any) => String(r.user_id)))).toEqual(new Set(winners.map(([u]) => u)));

    // Sold out is seen by both HTTP processes (flag or stock), and reconciliation sums the buckets exactly.
    for (const o of httpOrigins)
      expect((await signed(o.url, 'GET', `/internal/activities/${activityId}`)).body.soldOut).toBe(true);
    await waitFor(
      () => reconciliation(activityId),
      (rec) => rec.ok === true,
      30_000,
    );
  }, 300_000);

  it('every bucket’s consumer group is read on its own node (XINFO routed with the Stream’s key), never taken for "no group"', async () => {
    const { activityId } = await t.sale({ stock: 16, stockBuckets: 8 });
    const sale = await t.origin.parts.catalog.resolve(activityId);
    // The 8 Streams hash to slots on all 3 masters: a keyless XINFO reached one node and came back
    // MOVED for the buckets it does not serve.
    const owners = new Set<string>();
    for (let b = 0; b < 8; b++) {
      const slot = Number(await redis.cluster('KEYSLOT', activityKeys(activityId, sale.skuId, b, 8).events));
      owners.add(redis.slots[slot]![0]!);
    }
    expect(owners.size).toBeGreaterThan(1);
    const warm = await t.origin.parts.redis.sales.warmState(sale);
    expect(warm.group).toBe(true);
    expect(await t.origin.parts.redis.streams.groupInfo(sale)).toEqual({ pending: 0, lag: 0 });
    const verification = (await (await t.admin('GET', `/admin/activities/${activityId}/warmup`)).json()) as {
      ok: boolean;
    };
    expect(verification.ok).toBe(true);
  });

  it('skewed users (all homed in one bucket) buy every bucket’s units by borrowing, and no more', async () => {
    const { activityId, skuId } = await t.sale({ stock: 80, stockBuckets: 8 });
    const users = usersHomedAt(0, 8, 81);
    const results = [];
    for (const userId of users) results.push(await reserve(t.url, activityId, userId, `skew-${userId}`));
    expect(results.slice(0, 80).map((r) => r.status)).toEqual(Array(80).fill(202));
    expect(results[80]).toMatchObject({ status: 409, body: { error: 'sold_out' } });

    let lent = 0;
    for (let b = 0; b < 8; b++) {
      const keys = activityKeys(activityId, skuId, b, 8);
      expect(await redis.get(keys.stock)).toBe('0');
      lent += await redis.hlen(keys.lent);
    }
    expect(lent).toBe(70); // 10 from home, 70 borrowed from the other seven buckets
    await waitFor(
      () => orders(activityId),
      (n) => n >= 80,
    );
    expect(await orders(activityId)).toBe(80);
    await waitFor(
      () => reconciliation(activityId),
      (rec) => rec.ok === true,
      30_000,
    );
  }, 120_000);

  it('a process SIGKILLed between take and confirm: reconciliation names the units in transit, recover returns them', async () => {
    const { activityId, skuId } = await t.sale({ stock: 16, stockBuckets: 8 });
    const [a, b, victim, ...rest] = usersHomedAt(3, 8, 3);
    void rest;
    // Empty the victim's home bucket (2 units) with two neighbours.
    for (const userId of [a!, b!]) expect((await reserve(t.url, activityId, userId, `n-${userId}`)).status).toBe(202);

    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(new URL('../../helpers/borrow-crash-child.ts', import.meta.url)),
        cluster.nodes,
        activityId,
        skuId,
        '8',
        victim!,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => (chunk.toString().includes('TAKEN') ? resolve() : undefined));
      child.once('exit', (code) => reject(new Error(`child exited ${code} before taking`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));

    await waitFor(
      () => orders(activityId),
      (n) => n >= 2,
    );
    const before = await reconciliation(activityId);
    expect(before.ok).toBe(false);
    expect(before.checks.filter((c: any) => !c.ok)).toEqual([
      { name: 'redis.no_units_in_transit_between_buckets', expected: 0, actual: 1, ok: false },
    ]);
    expect(before.inTransit).toEqual([
      expect.objectContaining({
        quantity: 1,
        home: 3,
        state: 'p',
        reservationId: expect.stringMatching(`^${activityId}-`),
      }),
    ]);

    await new Promise((resolve) => setTimeout(resolve, 150)); // past BORROW_STALE_MS
    const recovered = await t.admin('POST', `/admin/activities/${activityId}/recover`);
    expect(recovered.status).toBe(200);
    expect(await recovered.json()).toMatchObject({ returnedFromTransit: 1, stock: 14 });
    expect((await reconciliation(activityId)).ok).toBe(true);

    // The victim is free to buy again, and the sale sells exactly its 16 units.
    expect((await reserve(t.url, activityId, victim!, 'again')).status).toBe(202);
    let sold = 3;
    for (let id = userBase(); ; id++) {
      const r = await reserve(t.url, activityId, String(id), `fill-${id}`);
      if (r.status === 409) break;
      expect(r.status).toBe(202);
      sold++;
    }
    expect(sold).toBe(16);
    await waitFor(
      () => orders(activityId),
      (n) => n >= 16,
    );
    expect(await orders(activityId)).toBe(16);
    await waitFor(
      () => reconciliation(activityId),
      (rec) => rec.ok === true,
      30_000,
    );
  }, 120_000);

  it('a bucketed sale lost from Redis: a partial loss is refused, a full one recovered per bucket, the sale ends exact', async () => {
    const { activityId, skuId } = await t.sale({ stock: 24, stockBuckets: 8 });
    const buyers = usersHomedAt(2, 8, 10); // 3 from their home bucket, 7 borrowed
    const granted = new Map<string, string>();
    for (const userId of buyers) {
      const r = await reserve(t.url, activityId, userId, `loss-${userId}`);
      expect(r.status).toBe(202);
      granted.set(userId, r.body.reservationId);
    }
    await waitFor(
      () => orders(activityId),
      (n) => n >= 10,
    );
    const bucketKeys = Array.from({ length: 8 }, (_, b) => activityKeys(activityId, skuId, b, 8));

    await redis.del(bucketKeys[0]!.stock); // one master lost its share
    const partial = await t.admin('POST', `/admin/activities/${activityId}/recover`);
    expect(partial.status).toBe(409);
    expect(((await partial.json()) as any).message).toMatch(/7 of 8 stock buckets still hold stock/);

    for (const k of bucketKeys)
      // everything but the Streams (and their groups) is gone
      for (const key of [k.stock, k.holders, k.config, k.released, k.refilled, k.borrowing, k.lent])
        await redis.del(key);
    expect((await t.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(409);
    const recovered = await t.admin('POST', `/admin/activities/${activityId}/recover`);
    expect(recovered.status).toBe(200);
    expect(await recovered.json()).toMatchObject({ stock: 14, holders: 10 });
    await waitFor(
      () => reconciliation(activityId),
      (rec) => rec.ok === true,
      30_000,
    );

    // Holders are back in their home buckets: a repeat gets the same reservation; the rest sells exactly.
    for (const [userId, reservationId] of granted)
      expect(await reserve(t.url, activityId, userId, `again-${userId}`)).toMatchObject({
        status: 200,
        body: { reservationId },
      });
    let sold = 10;
    for (let id = userBase(); ; id++) {
      const r = await reserve(t.url, activityId, String(id), `fill-${id}`);
      if (r.status === 409) break;
      expect(r.status).toBe(202);
      sold++;
    }
    expect(sold).toBe(24);
    await waitFor(
      () => orders(activityId),
      (n) => n >= 24,
    );
    expect(await orders(activityId)).toBe(24);
    await waitFor(
      () => reconciliation(activityId),
      (rec) => rec.ok === true,
      30_000,
    );
  }, 120_000);

  it('timed-out orders of a bucketed sale refill their bucket once; the sale is back on sale and sells them again', async () => {
    const { activityId } = await t.sale({ stock: 8, stockBuckets: 8 });
    const first = Array.from({ length: 9 }, (_, i) => String(userBase() + i));
    const answers = [];
    for (const userId of first) answers.push((await reserve(t.url, activityId, userId, `t-${userId}`)).status);
    expect(answers).toEqual([...Array(8).fill(202), 409]);
    await waitFor(
      () => orders(activityId),
      (n) => n >= 8,
    );
    expect(t.origin.parts.soldOut.has(activityId)).toBe(true);

    await t.db.pool.query(
      `UPDATE seckill_order SET expire_at = NOW(3) - INTERVAL 1 SECOND WHERE activity_id = ? AND user_id IN (?, ?, ?)`,
      [activityId, first[0], first[1], first[2]],
    );
    const sale = await t.origin.parts.catalog.resolve(activityId);
    await waitFor(
      () => t.origin.parts.redis.sales.stock(sale),
      (n) => n === 3,
      30_000,
    );
    await waitFor(
      async () => t.origin.parts.soldOut.has(activityId),
      (on) => on === false,
    );

    const again = [];
    for (let id = userBase(); again.length < 4; id++)
      again.push((await reserve(t.url, activityId, String(id), `r-${id}`)).status);
    expect(again).toEqual([202, 202, 202, 409]);
    await waitFor(
      () => orders(activityId),
      (n) => n >= 11,
    );
    expect(
      await scalar(t.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ? AND status = 2', [activityId]),
    ).toBe(3);
    await waitFor(
      () => reconciliation(activityId),
      (rec) => rec.ok === true,
      30_000,
    );
  }, 120_000);
});
