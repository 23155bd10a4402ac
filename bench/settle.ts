/**
 * Settlement benchmark: time to settle 20,000 queued reservations (one consumer process,
 * SETTLE_WORKERS consumers in it), orders/s, against a baseline measured in the same run: the same
 * number of MySQL connections doing bare autocommit hot-row `UPDATE ... WHERE available >= 1`
 * (the one statement of the settle transaction that cannot run in parallel).
 *
 *   npx tsx bench/settle.ts [--reservations 20000] [--workers 4]
 */
import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { activityKeys } from '../origin/redis/keys.js';
import { defineScripts } from '../origin/redis/scripts.js';
import { adminCall, BENCH_SECRETS, benchDatabase, freePort, spawnTs, stopChild, waitForHttp } from './lib/stack.js';

const { values } = parseArgs({
  options: { reservations: { type: 'string', default: '20000' }, workers: { type: 'string', default: '4' } },
});
const N = Number(values.reservations);
const workers = Number(values.workers);

async function baselineUpdates(
  pool: mysql.Pool,
  activityId: string,
  skuId: string,
  total: number,
  concurrency: number,
) {
  await pool.query('INSERT INTO seckill_stock (activity_id, sku_id, initial_stock, available) VALUES (?, ?, ?, ?)', [
    activityId,
    skuId,
    total,
    total,
  ]);
  let left = total;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        await pool.execute(
          'UPDATE seckill_stock SET available = available - 1 WHERE activity_id = ? AND sku_id = ? AND available >= 1',
          [activityId, skuId],
        );
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.query('DELETE FROM seckill_stock WHERE activity_id = ?', [activityId]);
  return { seconds, perSecond: total / seconds };
}

export async function benchSettle() {
  const database = await benchDatabase();
  const mysqlUrl = database.url;
  const activities: [string, string][] = [];
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const pool = mysql.createPool({ uri: mysqlUrl, connectionLimit: workers + 2 });
  const redis = new Redis(redisUrl);
  const port = await freePort();
  const originUrl = `http://127.0.0.1:${port}`;
  const env = { ...BENCH_SECRETS, MYSQL_URL: mysqlUrl, REDIS_URL: redisUrl, LOG_LEVEL: 'warn' };
  const http = spawnTs('origin/main.ts', { ...env, PORT: String(port), ORIGIN_ROLE: 'http' });
  let consumers: ReturnType<typeof spawnTs> | null = null;
  try {
    await waitForHttp(`${originUrl}/healthz`);
    const baseline = await baselineUpdates(pool, String(randomInt(1, 2 ** 40)), '1', N, workers);

    const activityId = String(randomInt(1, 2 ** 40));
    const skuId = '1';
    const now = Date.now();
    await adminCall(originUrl, 'POST', '/admin/activities', {
      activityId,
      skuId,
      title: 'settle bench',
      stock: N,
      startsAt: new Date(now - 1000).toISOString(),
      endsAt: new Date(now + 3_600_000).toISOString(),
    });
    await adminCall(originUrl, 'POST', `/admin/activities/${activityId}/warmup`);
    activities.push([activityId, skuId]);
    // Queue N reservations exactly as the reserve path does (the Lua script), pipelined.
    const keys = activityKeys(activityId, skuId);
    const scripts = defineScripts(redis);
    const base = randomInt(1, 2 ** 40);
    for (let i = 0; i < N; i += 1000) {
      await Promise.all(
        Array.from({ length: Math.min(1000, N - i) }, (_, j) =>
          scripts.reserve(
            [keys.stock, keys.holders, keys.events, keys.config, keys.borrowing],
            [
              String(base + i + j),
              1,
              `${activityId}-${(i + j).toString(16).padStart(32, '0')}`,
              `b${i + j}`,
              '',
              Date.now(),
              0, // one bucket: no borrowing
            ],
          ),
        ),
      );
    }
    const started = performance.now();
    consumers = spawnTs('origin/main.ts', {
      ...env,
      ORIGIN_ROLE: 'consumers',
      SETTLE_WORKERS: String(workers),
      SETTLE_DISCOVERY_MS: '50',
    });
    let firstOrderAt = 0;
    for (;;) {
      const [[row]] = (await pool.query('SELECT COUNT(*) AS n FROM seckill_order WHERE activity_id = ?', [
        activityId,
      ])) as any;
      if (!firstOrderAt && Number(row.n) > 0) firstOrderAt = performance.now();
      if (Number(row.n) >= N) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const end = performance.now();
    const seconds = (end - started) / 1000;
    const perSecond = N / seconds;
    const steady = N / ((end - firstOrderAt) / 1000);
    console.log(`\nsettlement benchmark (${N} queued reservations, one consumer process with ${workers} consumers)`);
    console.table({
      'bare hot-row UPDATE autocommit (baseline)': {
        seconds: +baseline.seconds.toFixed(2),
        perSecond: Math.round(baseline.perSecond),
      },
      'settle, from process start': { seconds: +seconds.toFixed(2), perSecond: Math.round(perSecond) },
      'settle, from the first order': {
        seconds: +((end - firstOrderAt) / 1000).toFixed(2),
        perSecond: Math.round(steady),
      },
    });
    console.log(
      `ratio settle/bare-update = ${(steady / baseline.perSecond).toFixed(2)} (settle: order + conditional stock update + log per reservation, one transaction per batch, then XACK)`,
    );
    await adminCall(originUrl, 'PATCH', `/admin/activities/${activityId}`, { state: 'stopped' });
    return { seconds, perSecond, baseline };
  } finally {
    if (consumers) await stopChild(consumers);
    await stopChild(http);
    await pool.end();
    await redis.quit();
    await database.drop(activities);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchSettle().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
